/**
 * An inbox and its messages, newest first. live.js adds the messages that
 * arrive while the page is open, from the event stream (no polling, no
 * reload); the rows it adds have the markup of `MessageRow`.
 */
import type { Context } from "hono";
import type { MessageSummary } from "../../client/mod.ts";
import type { UiEnv } from "../context.ts";
import { read } from "../api.ts";
import {
  ApiButton,
  apiRequest,
  Columns,
  CopyButton,
  Countdown,
  Pager,
  render,
  Time,
  uiPath,
  withQuery,
} from "../layout.tsx";

/** One message of the list (live.js builds the same row for a message that arrives). */
function MessageRow(props: { message: MessageSummary }) {
  const m = props.message;
  return (
    <tr data-message-id={m.id}>
      <td>
        <a href={uiPath("inboxes", m.inboxId, "messages", m.id)}>{m.subject || "(no subject)"}</a>
      </td>
      <td>{m.from}</td>
      <td>{m.to}</td>
      <td>
        <Time iso={m.receivedAt} />
      </td>
    </tr>
  );
}

/** GET /ui/inboxes/:id */
export async function inboxPage(c: Context<UiEnv>, now: Date) {
  const { api } = c.var.reader;
  const id = c.req.param("id")!;
  const cursor = c.req.query("cursor");
  const [inbox, page] = await Promise.all([
    read(api.inboxes.get(id)),
    read(api.messages.list(id, cursor ? { cursor } : {})),
  ]);
  return render(
    c,
    { title: inbox.address, section: "/ui/inboxes", live: !cursor },
    <>
      <p class="crumbs">
        <a href="/ui/inboxes">Inboxes</a> /
      </p>
      <h1>
        <span class="address">{inbox.address}</span> <CopyButton text={inbox.address} label="Copy address" />
      </h1>
      <p class="meta">
        Expires <Countdown iso={inbox.expiresAt} now={now} /> · created <Time iso={inbox.createdAt} /> ·{" "}
        <ApiButton
          class="danger"
          request={apiRequest("DELETE", "inboxes", inbox.id)}
          done="go:/ui/inboxes"
          confirm={`Delete ${inbox.address} and its messages?`}
        >
          Delete inbox
        </ApiButton>
      </p>
      <p class="muted">
        Mail to <code>{inbox.address}</code>, or to a tagged address such as{" "}
        <code>{inbox.address.replace("@", "+signup@")}</code>, lands here.{" "}
        {cursor ? null : <span class="live" data-live-status>Connecting to live updates…</span>}
      </p>
      <table class="messages">
        <Columns names={["Subject", "From", "To", "Received"]} />
        <tbody data-live-inbox={cursor ? undefined : inbox.id}>
          {page.data.map((message) => <MessageRow key={message.id} message={message} />)}
        </tbody>
      </table>
      <p class="empty" data-empty hidden={page.data.length > 0}>No messages yet.</p>
      <Pager href={page.nextCursor ? withQuery(uiPath("inboxes", inbox.id), { cursor: page.nextCursor }) : undefined} />
    </>,
  );
}
