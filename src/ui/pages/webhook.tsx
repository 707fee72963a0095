/**
 * A webhook: its state, a test send (whose result is shown here: the test
 * endpoint keeps no log row), pause or resume, edit, delete, and its
 * delivery log with each attempt's request and response bodies and a
 * redelivery.
 */
import type { Context } from "hono";
import type { Delivery } from "../../client/mod.ts";
import type { UiEnv } from "../context.ts";
import { read } from "../api.ts";
import { ApiButton, apiRequest, ErrorBox, Pager, render, Time, uiPath, withQuery } from "../layout.tsx";
import { EventChoices } from "./webhooks.tsx";

/** A body as JSON laid out for reading when it is JSON, else as it is. */
function readable(body: string): string {
  try {
    return JSON.stringify(JSON.parse(body), null, 2);
  } catch {
    return body;
  }
}

function DeliveryEntry(props: { webhookId: string; delivery: Delivery }) {
  const d = props.delivery;
  return (
    <details class="delivery" data-delivery-id={d.id}>
      <summary>
        <span class={`badge ${d.status}`}>{d.status}</span> <strong>{d.eventType}</strong> <code>{d.eventId}</code>
        {[
          `attempt ${d.attempt}`,
          d.responseStatus === null ? undefined : `HTTP ${d.responseStatus}`,
          d.durationMs === null ? undefined : `${d.durationMs} ms`,
        ].filter((part) => part !== undefined).map((part) => ` · ${part}`)} · <Time iso={d.createdAt} />
      </summary>
      <dl class="fields">
        <dt>Delivery</dt>
        <dd>
          <code>{d.id}</code>
        </dd>
        <dt>URL</dt>
        <dd>{d.url ?? <span class="muted">not sent yet</span>}</dd>
        {d.error ? <dt>Error</dt> : null}
        {d.error ? <dd>{d.error}</dd> : null}
        {d.nextAttemptAt ? <dt>Next attempt</dt> : null}
        {d.nextAttemptAt
          ? (
            <dd>
              <Time iso={d.nextAttemptAt} />
            </dd>
          )
          : null}
      </dl>
      <h4>Request body</h4>
      <pre class="body" data-request-body>{readable(d.requestBody)}</pre>
      <h4>Response body</h4>
      {d.responseBody === null
        ? <p class="muted">No response.</p>
        : <pre class="body" data-response-body>{readable(d.responseBody)}</pre>}
      <p>
        <ApiButton
          request={apiRequest("POST", "user-webhooks", props.webhookId, "deliveries", d.id, "redeliver")}
        >
          Redeliver
        </ApiButton>
      </p>
    </details>
  );
}

/** GET /ui/webhooks/:id */
export async function webhookPage(c: Context<UiEnv>) {
  const { api } = c.var.reader;
  const id = c.req.param("id")!;
  const cursor = c.req.query("cursor");
  const [webhook, log] = await Promise.all([
    read(api.webhooks.get(id)),
    read(api.deliveries.list(id, cursor ? { cursor } : {})),
  ]);
  const self = apiRequest("PATCH", "user-webhooks", webhook.id);
  return render(
    c,
    { title: webhook.url, section: "/ui/webhooks" },
    <>
      <p class="crumbs">
        <a href="/ui/webhooks">Webhooks</a> /
      </p>
      <h1 class="address">{webhook.url}</h1>
      <dl class="fields">
        <dt>Status</dt>
        <dd>
          <span class={webhook.active ? "badge ok" : "badge off"} data-webhook-status>
            {webhook.active ? "active" : "paused"}
          </span>
        </dd>
        <dt>Events</dt>
        <dd>{webhook.events.join(", ")}</dd>
        <dt>Failures in a row</dt>
        <dd>{webhook.failureCount}</dd>
        <dt>Last triggered</dt>
        <dd>
          <Time iso={webhook.lastTriggeredAt} />
        </dd>
        {webhook.lastFailureAt ? <dt>Last failure</dt> : null}
        {webhook.lastFailureAt
          ? (
            <dd>
              <Time iso={webhook.lastFailureAt} />: {webhook.lastFailureReason}
            </dd>
          )
          : null}
        <dt>Created</dt>
        <dd>
          <Time iso={webhook.createdAt} />
        </dd>
        <dt>ID</dt>
        <dd>
          <code>{webhook.id}</code>
        </dd>
      </dl>
      <p class="actions">
        <ApiButton request={apiRequest("POST", "user-webhooks", webhook.id, "test")} done="show:#test-result">
          Send test event
        </ApiButton>{" "}
        {webhook.active
          ? <ApiButton request={self} body={{ active: false }}>Pause</ApiButton>
          : <ApiButton request={self} body={{ active: true }}>Resume</ApiButton>}{" "}
        <ApiButton
          class="danger"
          request={apiRequest("DELETE", "user-webhooks", webhook.id)}
          done="go:/ui/webhooks"
          confirm={`Delete the webhook to ${webhook.url}?`}
        >
          Delete
        </ApiButton>
      </p>
      <div id="test-result" class="card result" role="status" hidden>
        <h3>
          Test event: <span data-field="success" data-true="delivered" data-false="failed"></span>
        </h3>
        <p>
          HTTP <span data-field="responseStatus"></span> in <span data-field="durationMs"></span> ms
        </p>
        <pre class="body" data-field="responseBody"></pre>
      </div>

      <h2>Edit</h2>
      <form class="card stack" data-request={self} data-done="reload" data-changed-only>
        <label>
          URL
          <input type="url" name="url" value={webhook.url} required />
        </label>
        <EventChoices selected={webhook.events} />
        <label>
          New signing secret <span class="muted">(leave empty to keep the current one)</span>
          <input type="password" name="secret" data-optional minlength={16} maxlength={256} autocomplete="off" />
        </label>
        <label class="check">
          <input type="checkbox" name="active" checked={webhook.active} /> Active (sends deliveries)
        </label>
        <ErrorBox />
        <button type="submit">Save</button>
      </form>

      <h2>Delivery log</h2>
      {log.data.length === 0
        ? <p class="empty">No deliveries yet.</p>
        : log.data.map((delivery) => <DeliveryEntry key={delivery.id} webhookId={webhook.id} delivery={delivery} />)}
      <Pager
        href={log.nextCursor ? withQuery(uiPath("webhooks", webhook.id), { cursor: log.nextCursor }) : undefined}
      />
    </>,
  );
}
