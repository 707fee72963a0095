/** The inboxes: create one (optional local part and lifetime), copy an address, see it expire, delete it. */
import type { Context } from "hono";
import type { UiEnv } from "../context.ts";
import { read } from "../api.ts";
import {
  ApiButton,
  apiRequest,
  Columns,
  CopyButton,
  Countdown,
  ErrorBox,
  Pager,
  render,
  Time,
  uiPath,
  withQuery,
} from "../layout.tsx";

/** The lifetimes offered, in seconds (the API takes 60 to 604800; 3600 when left out). */
const LIFETIMES: [number, string][] = [
  [600, "10 minutes"],
  [3600, "1 hour"],
  [86_400, "1 day"],
  [604_800, "7 days"],
];

/** GET /ui/inboxes */
export async function inboxesPage(c: Context<UiEnv>, now: Date) {
  const { api } = c.var.reader;
  const cursor = c.req.query("cursor");
  const page = await read(api.inboxes.list(cursor ? { cursor } : {}));
  return render(
    c,
    { title: "Inboxes", section: "/ui/inboxes" },
    <>
      <h1>Inboxes</h1>
      <form class="card row" data-request="POST /api/inboxes" data-done="go:/ui/inboxes/{id}">
        <label>
          Local part <span class="muted">(optional)</span>
          <input
            name="localPart"
            data-optional
            placeholder="random"
            pattern="[a-z0-9]([a-z0-9._\-]{0,62}[a-z0-9])?"
            maxlength={64}
          />
        </label>
        <label>
          Lifetime
          <select name="ttlSeconds" data-type="number">
            {LIFETIMES.map(([seconds, label]) => (
              <option value={String(seconds)} selected={seconds === 3600}>{label}</option>
            ))}
          </select>
        </label>
        <button type="submit">Create inbox</button>
        <ErrorBox />
      </form>
      {page.data.length === 0
        ? <p class="empty">No inboxes yet: create one above, then send mail to its address.</p>
        : (
          <table>
            <Columns names={["Address", "Created", "Expires", ""]} />
            <tbody>
              {page.data.map((inbox) => (
                <tr data-inbox-id={inbox.id}>
                  <td>
                    <a href={uiPath("inboxes", inbox.id)}>{inbox.address}</a> <CopyButton text={inbox.address} />
                  </td>
                  <td>
                    <Time iso={inbox.createdAt} />
                  </td>
                  <td>
                    <Countdown iso={inbox.expiresAt} now={now} />
                  </td>
                  <td class="actions">
                    <ApiButton
                      class="danger"
                      request={apiRequest("DELETE", "inboxes", inbox.id)}
                      confirm={`Delete ${inbox.address} and its messages?`}
                    >
                      Delete
                    </ApiButton>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      <Pager href={page.nextCursor ? withQuery("/ui/inboxes", { cursor: page.nextCursor }) : undefined} />
    </>,
  );
}
