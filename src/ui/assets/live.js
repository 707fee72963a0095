/*
 * An inbox page's live list: messages arrive from the event stream
 * (GET /api/events/stream, `message.received` frames of this inbox) without
 * polling or a reload. Each time the stream opens, the list is read again
 * once (GET /api/inboxes/{id}/messages): a message that came between the
 * page's rendering and the stream's start, or while the stream was
 * reconnecting, is not missed; the ids already shown are not added twice.
 *
 * A row is built as the server builds it (MessageRow in
 * src/ui/pages/inbox.tsx), from text only (`textContent`): mail content
 * never becomes markup.
 */
"use strict";

const list = document.querySelector("tbody[data-live-inbox]");
if (list) follow(list);

/** `2025-01-31 12:34:56 UTC` (as `formatTime` in src/ui/format.ts). */
function formatTime(iso) {
  return `${iso.slice(0, 10)} ${iso.slice(11, 19)} UTC`;
}

function follow(list) {
  const inboxId = list.dataset.liveInbox;
  const status = document.querySelector("[data-live-status]");
  const empty = document.querySelector("[data-empty]");
  const shown = new Set([...list.querySelectorAll("tr[data-message-id]")].map((row) => row.dataset.messageId));

  const say = (state, text) => {
    list.dataset.live = state;
    if (status) {
      status.textContent = text;
      status.dataset.state = state;
    }
  };

  /** A cell with `text`, or with a link to `href` reading `text`. */
  const cell = (text, href) => {
    const td = document.createElement("td");
    if (href) {
      const a = document.createElement("a");
      a.href = href;
      a.textContent = text;
      td.append(a);
    } else {
      td.textContent = text;
    }
    return td;
  };

  /** Adds a message to the list, newest first, unless it is there already. */
  const add = (m) => {
    if (shown.has(m.id)) return;
    shown.add(m.id);
    const row = document.createElement("tr");
    row.dataset.messageId = m.id;
    row.className = "arrived";
    const time = document.createElement("time");
    time.dateTime = m.receivedAt;
    time.textContent = formatTime(m.receivedAt);
    const when = cell("");
    when.append(time);
    const href = `/ui/inboxes/${encodeURIComponent(inboxId)}/messages/${encodeURIComponent(m.id)}`;
    row.append(cell(m.subject || "(no subject)", href), cell(m.from), cell(m.to), when);
    const later = [...list.children].find((r) => (r.querySelector("time")?.dateTime ?? "") < m.receivedAt);
    list.insertBefore(row, later ?? null);
    if (empty) empty.hidden = true;
  };

  /** The newest messages as the API lists them now. */
  const catchUp = async () => {
    const response = await fetch(`/api/inboxes/${encodeURIComponent(inboxId)}/messages`, {
      credentials: "same-origin",
      headers: { accept: "application/json" },
    });
    if (!response.ok) return;
    const page = await response.json();
    for (const m of page.data.toReversed()) add(m);
  };

  const stream = new EventSource("/api/events/stream?types=message.received");
  stream.addEventListener("open", () => {
    say("open", "Live: new mail appears here as it arrives.");
    catchUp().catch(() => {});
  });
  stream.addEventListener("message.received", (event) => {
    const { data } = JSON.parse(event.data);
    if (data.inboxId !== inboxId) return;
    add({ id: data.messageId, subject: data.subject, from: data.from, to: data.to, receivedAt: data.receivedAt });
  });
  stream.addEventListener("error", () => {
    // EventSource reconnects by itself (with Last-Event-ID) unless the service refused the stream.
    if (stream.readyState === EventSource.CLOSED) say("closed", "Live updates stopped: reload the page.");
    else say("reconnecting", "Reconnecting…");
  });
  // Frees the account's stream at once rather than when the connection times out.
  addEventListener("pagehide", () => stream.close());
}
