/**
 * The document a mail's HTML is shown in: the `srcdoc` of an `iframe` whose
 * `sandbox` has neither `allow-scripts` nor `allow-same-origin`, so the mail
 * runs no script (no `<script>`, no `on...` handler, no `javascript:` URL),
 * lives in an opaque origin (it can read neither the page nor the session
 * cookie), and submits no form. Inside, a policy of its own blocks every
 * load (scripts, frames, fonts, stylesheets, media) but inline styles and
 * data: images, and remote images as well until the reader asks for them:
 * a tracking pixel learns nothing from a mail that was only opened.
 *
 * The mail's HTML is put after the policy, inside `<body>`: the browser's
 * parser then ignores the mail's own `<head>`, and a `<meta>` policy of
 * the mail (which could only add restrictions) is not in the head where it
 * would count.
 */

/** The sandbox of the mail's frame: links open in a new tab, outside the sandbox; nothing else is allowed. */
export const MAIL_SANDBOX = "allow-popups allow-popups-to-escape-sandbox";

/** The policy inside the mail's frame. */
export function mailFramePolicy(remoteImages: boolean): string {
  return [
    "default-src 'none'",
    "script-src 'none'",
    "style-src 'unsafe-inline'",
    remoteImages ? "img-src https: http: data:" : "img-src data:",
    "form-action 'none'",
  ].join("; ");
}

/** Escapes text for an HTML attribute value in double quotes. */
function attribute(text: string): string {
  return text.replaceAll("&", "&amp;").replaceAll('"', "&quot;").replaceAll("<", "&lt;");
}

/** The frame's whole document for the mail's `html` (its `srcdoc`, which the page's JSX escapes once more). */
export function mailFrameDocument(html: string, remoteImages: boolean): string {
  return "<!doctype html><html><head>" +
    '<meta charset="utf-8">' +
    `<meta http-equiv="Content-Security-Policy" content="${attribute(mailFramePolicy(remoteImages))}">` +
    // A shown image or a followed link tells the sender nothing about where the mail was read.
    '<meta name="referrer" content="no-referrer">' +
    // Links leave the frame for a tab of their own rather than replacing the mail inside it.
    '<base target="_blank">' +
    "</head><body>" + html + "</body></html>";
}
