/** The webhooks: the list, and a new one (URL, events, optional secret). */
import type { Context } from "hono";
import type { EventType } from "../../client/mod.ts";
import type { UiEnv } from "../context.ts";
import { read } from "../api.ts";
import { Columns, ErrorBox, render, Time, uiPath } from "../layout.tsx";

/** The events a webhook may subscribe to (`EventType` of openapi.yaml). */
const EVENT_TYPES: readonly EventType[] = ["message.received", "inbox.created", "inbox.expired"];

/** The event checkboxes of the create and edit forms. */
export function EventChoices(props: { selected: readonly string[] }) {
  return (
    <fieldset>
      <legend>Events</legend>
      {EVENT_TYPES.map((type) => (
        <label class="check">
          <input type="checkbox" name="events" value={type} data-list checked={props.selected.includes(type)} />
          {type}
        </label>
      ))}
    </fieldset>
  );
}

/** GET /ui/webhooks */
export async function webhooksPage(c: Context<UiEnv>) {
  const { api } = c.var.reader;
  const webhooks = await read(api.webhooks.list());
  return render(
    c,
    { title: "Webhooks", section: "/ui/webhooks" },
    <>
      <h1>Webhooks</h1>
      {webhooks.length === 0 ? <p class="empty">No webhooks yet.</p> : (
        <table>
          <Columns names={["URL", "Events", "Status", "Failures", "Last triggered"]} />
          <tbody>
            {webhooks.map((w) => (
              <tr data-webhook-id={w.id}>
                <td>
                  <a href={uiPath("webhooks", w.id)}>{w.url}</a>
                </td>
                <td>{w.events.join(", ")}</td>
                <td>
                  <span class={w.active ? "badge ok" : "badge off"}>{w.active ? "active" : "paused"}</span>
                </td>
                <td>{w.failureCount}</td>
                <td>
                  <Time iso={w.lastTriggeredAt} />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <h2>New webhook</h2>
      <form class="card stack" data-request="POST /api/user-webhooks" data-done="go:/ui/webhooks/{id}">
        <label>
          URL <span class="muted">(https, reachable from the service)</span>
          <input type="url" name="url" required placeholder="https://example.com/hooks/inbox" />
        </label>
        <EventChoices selected={["message.received"]} />
        <label>
          Signing secret{" "}
          <span class="muted">(optional, 16 to 256 characters; deliveries are unsigned without one)</span>
          <input type="password" name="secret" data-optional minlength={16} maxlength={256} autocomplete="off" />
        </label>
        <ErrorBox />
        <button type="submit">Create webhook</button>
      </form>
    </>,
  );
}
