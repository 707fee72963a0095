/**
 * Links of a received mail, so that a test suite can "click the link"
 * without parsing mail itself.
 *
 * @module
 */
import { walkHtml } from "./html_text.ts";
import type { Link, MailContent } from "./types.ts";
import { bareUrls } from "./urls.ts";

/**
 * Every http(s) link, de-duplicated by URL (first occurrence wins): the HTML's
 * anchors (and bare URLs in its visible text) in document order, then the URLs
 * of the text body, whose `text` is null.
 */
export function extractLinks(mail: MailContent): Link[] {
  try {
    return findLinks(mail);
  } catch {
    return [];
  }
}

function findLinks(mail: MailContent): Link[] {
  const links: Link[] = [];
  const seen = new Set<string>();
  const add = (url: string, text: string | null) => {
    if (seen.has(url)) return;
    seen.add(url);
    links.push({ url, text });
  };
  if (typeof mail.html === "string" && mail.html !== "") {
    const placed = walkHtml(mail.html).links;
    // Anchors are recorded when they open, bare URLs when their line ends: order both by position.
    placed
      .map((link, i) => ({ link, i }))
      .sort((a, b) => a.link.line - b.link.line || a.link.offset - b.link.offset || a.i - b.i)
      .forEach(({ link }) => add(link.url, link.text));
  }
  if (typeof mail.text === "string") {
    for (const { url } of bareUrls(mail.text)) add(url, null);
  }
  return links;
}
