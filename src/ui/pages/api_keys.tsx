/**
 * API keys: a new key (name, scopes, the inboxes it reaches, an expiry),
 * shown once (the answer of POST /api/api-keys goes into the page and
 * nowhere else: a reload no longer has it), the list, and revocation.
 */
import type { Context } from "hono";
import type { components } from "../../client/mod.ts";
import type { UiEnv } from "../context.ts";
import { read } from "../api.ts";
import { ApiButton, apiRequest, Columns, ErrorBox, render, Time } from "../layout.tsx";

type Scope = components["schemas"]["Scope"];

/** Every scope (`Scope` of openapi.yaml), with what it allows. */
const SCOPES: readonly [Scope, string][] = [
  ["inboxes:read", "read inboxes, messages, raw mail, attachments"],
  ["inboxes:write", "create and delete inboxes, delete messages"],
  ["webhooks:read", "read webhooks and delivery logs"],
  ["webhooks:write", "create, change, test and delete webhooks, redeliver"],
  ["events:read", "read the event log and stream"],
];

/** The expiries offered, in seconds (the API takes 60 to 31536000, or none). */
const EXPIRIES: [number, string][] = [
  [3600, "in 1 hour"],
  [86_400, "in 1 day"],
  [7 * 86_400, "in 7 days"],
  [30 * 86_400, "in 30 days"],
  [365 * 86_400, "in 1 year"],
];

/** GET /ui/api-keys */
export async function apiKeysPage(c: Context<UiEnv>) {
  const { api } = c.var.reader;
  const [keys, inboxes] = await Promise.all([read(api.apiKeys.list()), read(api.inboxes.list({ limit: 100 }))]);
  const addressOf = new Map(inboxes.data.map((inbox) => [inbox.id, inbox.address]));
  return render(
    c,
    { title: "API keys", section: "/ui/api-keys" },
    <>
      <h1>API keys</h1>
      <div id="new-key" class="card result" role="status" hidden>
        <h3>
          New key <span data-field="name"></span>
        </h3>
        <p>Copy it now: it is shown only this once, and cannot be read again.</p>
        <p>
          <code class="secret" data-field="key"></code>{" "}
          <button type="button" class="copy" data-copy-from="#new-key [data-field=key]">Copy key</button>
        </p>
        <button type="button" data-reload>Done</button>
      </div>
      <form class="card stack" data-request="POST /api/api-keys" data-done="show:#new-key">
        <label>
          Name
          <input name="name" required maxlength={100} placeholder="ci" />
        </label>
        <fieldset>
          <legend>Scopes (all checked: every scope, including ones added later)</legend>
          {SCOPES.map(([scope, what]) => (
            <label class="check">
              <input type="checkbox" name="scopes" value={scope} data-list data-omit-all checked />
              <code>{scope}</code> <span class="muted">{what}</span>
            </label>
          ))}
        </fieldset>
        <fieldset>
          <legend>Inboxes (none checked: every inbox of the account)</legend>
          {inboxes.data.length === 0
            ? <p class="muted">No inboxes.</p>
            : inboxes.data.map((inbox) => (
              <label class="check">
                <input type="checkbox" name="inboxIds" value={inbox.id} data-list data-optional />
                {inbox.address}
              </label>
            ))}
        </fieldset>
        <label>
          Expires
          <select name="expiresInSeconds" data-type="number" data-optional>
            <option value="">never</option>
            {EXPIRIES.map(([seconds, label]) => <option key={seconds} value={String(seconds)}>{label}</option>)}
          </select>
        </label>
        <ErrorBox />
        <button type="submit">Create key</button>
      </form>

      {keys.length === 0 ? <p class="empty">No API keys.</p> : (
        <table>
          <Columns names={["Name", "Key", "Scopes", "Inboxes", "Expires", "Last used", "Created", ""]} />
          <tbody>
            {keys.map((key) => (
              <tr data-key-id={key.id}>
                <td>{key.name}</td>
                <td>
                  <code>{key.keyPrefix}…</code>
                </td>
                <td>{key.scopes.length === SCOPES.length ? "all" : key.scopes.join(", ")}</td>
                <td>{key.inboxIds ? key.inboxIds.map((id) => addressOf.get(id) ?? id).join(", ") : "all"}</td>
                <td>{key.expiresAt ? <Time iso={key.expiresAt} /> : <span class="muted">never</span>}</td>
                <td>
                  <Time iso={key.lastUsedAt} />
                </td>
                <td>
                  <Time iso={key.createdAt} />
                </td>
                <td class="actions">
                  <ApiButton
                    class="danger"
                    request={apiRequest("DELETE", "api-keys", key.id)}
                    confirm={`Revoke the key ${key.name}? Whatever uses it stops working at once.`}
                  >
                    Revoke
                  </ApiButton>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </>,
  );
}
