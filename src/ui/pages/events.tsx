/**
 * The event log, oldest first as the API gives it, a page at a time: the
 * next page starts after the last event of this one (`nextCursor`).
 */
import type { Context } from "hono";
import type { Event } from "../../client/mod.ts";
import type { UiEnv } from "../context.ts";
import { read } from "../api.ts";
import { Columns, Pager, render, Time, uiPath, withQuery } from "../layout.tsx";

/** The events a page shows when the address does not say (`?limit=`, 1 to 100, as the API takes it). */
const PAGE_SIZE = 50;

/** A string field of an event's data, if it has one. */
function field(event: Event, name: string): string | undefined {
  const value = event.data[name];
  return typeof value === "string" ? value : undefined;
}

/** One line on what the event is about, linked to it where the UI shows it. */
function About(props: { event: Event }) {
  const { event } = props;
  const inboxId = field(event, "inboxId");
  const messageId = field(event, "messageId");
  if (inboxId && messageId) {
    return (
      <a href={uiPath("inboxes", inboxId, "messages", messageId)}>
        “{field(event, "subject") || "(no subject)"}” from {field(event, "from")} to {field(event, "to")}
      </a>
    );
  }
  if (inboxId) return <a href={uiPath("inboxes", inboxId)}>{field(event, "address") ?? inboxId}</a>;
  const webhookId = field(event, "webhookId");
  if (webhookId) return <a href={uiPath("webhooks", webhookId)}>{field(event, "url") ?? webhookId}</a>;
  return null;
}

/** GET /ui/events */
export async function eventsPage(c: Context<UiEnv>) {
  const { api } = c.var.reader;
  const after = c.req.query("after");
  const limitText = c.req.query("limit");
  const limit = limitText && /^\d{1,3}$/.test(limitText) ? Number(limitText) : PAGE_SIZE;
  const page = await read(api.events.list({ limit, ...(after ? { after } : {}) }));
  const next = page.nextCursor
    ? withQuery("/ui/events", { after: page.nextCursor, limit: limitText ? String(limit) : undefined })
    : undefined;
  return render(
    c,
    { title: "Events", section: "/ui/events" },
    <>
      <h1>Events</h1>
      <p class="muted">
        Everything that happened in this account, oldest first, as webhooks receive it (kept for{" "}
        <code>EVENT_RETENTION_DAYS</code>).{after
          ? (
            <>
              {" "}
              <a href="/ui/events">Back to the first page</a>
            </>
          )
          : null}
      </p>
      {page.data.length === 0
        ? <p class="empty">{after ? "No events after this one yet." : "No events yet."}</p>
        : (
          <table class="events">
            <Columns names={["Time", "Type", "About", "Event"]} />
            <tbody>
              {page.data.map((event) => (
                <tr data-event-id={event.id}>
                  <td>
                    <Time iso={event.createdAt} />
                  </td>
                  <td>
                    <code>{event.type}</code>
                  </td>
                  <td>
                    <About event={event} />
                  </td>
                  <td>
                    <details>
                      <summary>
                        <code>{event.id}</code>
                      </summary>
                      <pre class="body">{JSON.stringify(event, null, 2)}</pre>
                    </details>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      <Pager href={next} />
    </>,
  );
}
