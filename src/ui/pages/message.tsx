/**
 * A message: its HTML in a sandboxed frame (src/ui/mail_frame.ts) with remote
 * images blocked until the reader asks (`?images=shown`, which also relaxes
 * the page's own policy for them), its text, codes and links with copy
 * buttons, attachments and the raw message (the API's download URLs), and
 * its headers.
 */
import type { Context } from "hono";
import type { UiEnv } from "../context.ts";
import { read } from "../api.ts";
import { formatSize } from "../format.ts";
import { MAIL_SANDBOX, mailFrameDocument } from "../mail_frame.ts";
import { ApiButton, apiRequest, CopyButton, render, Time, uiPath } from "../layout.tsx";

/** The query of a message page once the reader asked for the remote images. */
export const SHOW_IMAGES = "images=shown";

/** Only http(s) links become links (the API lists no other, and a page never gets a `javascript:` href). */
function isWebUrl(url: string): boolean {
  return /^https?:\/\//i.test(url);
}

/** GET /ui/inboxes/:id/messages/:messageId */
export async function messagePage(c: Context<UiEnv>) {
  const { api } = c.var.reader;
  const inboxId = c.req.param("id")!;
  const messageId = c.req.param("messageId")!;
  const [inbox, message] = await Promise.all([
    read(api.inboxes.get(inboxId)),
    read(api.messages.get(inboxId, messageId)),
  ]);
  const remoteImages = c.req.query("images") === "shown";
  c.set("pagePolicy", { mailFrame: message.html !== null, remoteImages: message.html !== null && remoteImages });
  const self = uiPath("inboxes", inboxId, "messages", messageId);
  const apiPath = `/api/inboxes/${encodeURIComponent(inboxId)}/messages/${encodeURIComponent(messageId)}`;
  return render(
    c,
    { title: message.subject || "(no subject)", section: "/ui/inboxes" },
    <>
      <p class="crumbs">
        <a href="/ui/inboxes">Inboxes</a> / <a href={uiPath("inboxes", inboxId)}>{inbox.address}</a> /
      </p>
      <h1>{message.subject || "(no subject)"}</h1>
      <dl class="fields">
        <dt>From</dt>
        <dd>{message.from}</dd>
        <dt>To</dt>
        <dd>
          {message.to} <CopyButton text={message.to} />
        </dd>
        <dt>Received</dt>
        <dd>
          <Time iso={message.receivedAt} />
        </dd>
        <dt>Size</dt>
        <dd>{formatSize(message.size)}</dd>
      </dl>
      <p class="actions">
        <a class="button" href={`${apiPath}/raw`} download={`${messageId}.eml`}>Download raw (.eml)</a>{" "}
        <ApiButton
          class="danger"
          request={apiRequest("DELETE", "inboxes", inboxId, "messages", messageId)}
          done={`go:${uiPath("inboxes", inboxId)}`}
          confirm="Delete this message?"
        >
          Delete message
        </ApiButton>
      </p>

      {message.codes.length > 0
        ? (
          <section>
            <h2>Codes</h2>
            <ul class="codes">
              {message.codes.map((code) => (
                <li>
                  <code class="code">{code}</code> <CopyButton text={code} />
                </li>
              ))}
            </ul>
          </section>
        )
        : null}

      {message.links.length > 0
        ? (
          <section>
            <h2>Links</h2>
            <ul class="links">
              {message.links.map((link) => (
                <li>
                  {link.text ? <span class="link-text">{link.text}</span> : null}
                  {isWebUrl(link.url)
                    ? <a href={link.url} target="_blank" rel="noopener noreferrer" class="url">{link.url}</a>
                    : <span class="url">{link.url}</span>} <CopyButton text={link.url} />
                </li>
              ))}
            </ul>
          </section>
        )
        : null}

      <section>
        <h2>HTML</h2>
        {message.html === null ? <p class="muted">This message has no HTML part.</p> : (
          <>
            <p class="images">
              {remoteImages
                ? (
                  <>
                    Remote images are shown. <a href={self}>Block them again</a>
                  </>
                )
                : (
                  <>
                    Remote images are blocked, so the sender cannot tell the mail was opened.{" "}
                    <a class="button" href={`${self}?${SHOW_IMAGES}`}>Show images</a>
                  </>
                )}
            </p>
            <div class="frame">
              <iframe
                title="The message's HTML"
                sandbox={MAIL_SANDBOX}
                referrerpolicy="no-referrer"
                srcdoc={mailFrameDocument(message.html, remoteImages)}
              >
              </iframe>
            </div>
          </>
        )}
      </section>

      <section>
        <h2>Text</h2>
        {message.text === null
          ? <p class="muted">This message has no text part.</p>
          : <pre class="text">{message.text}</pre>}
      </section>

      {message.attachments.length > 0
        ? (
          <section>
            <h2>Attachments</h2>
            <table>
              <tbody>
                {message.attachments.map((a) => (
                  <tr>
                    <td>
                      <a href={`${apiPath}/attachments/${encodeURIComponent(a.id)}`} download={a.filename ?? a.id}>
                        {a.filename ?? a.id}
                      </a>
                    </td>
                    <td>{a.contentType}</td>
                    <td>{formatSize(a.size)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </section>
        )
        : null}

      <section>
        <details>
          <summary>Headers ({Object.keys(message.headers).length})</summary>
          <table class="headers">
            <tbody>
              {Object.entries(message.headers).map(([name, value]) => (
                <tr>
                  <th>{name}</th>
                  <td>{value}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </details>
      </section>
    </>,
  );
}
