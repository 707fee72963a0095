/**
 * URLs: an href kept when it is http(s), and URLs found in plain text.
 *
 * @module
 */

/** An href's URL when it is http(s), else null (mailto:, tel:, #fragment, relative, javascript:). */
export function httpUrl(href: string | undefined): string | null {
  if (href === undefined) return null;
  // The URL standard strips surrounding whitespace and drops tabs and newlines anywhere.
  const url = href.replace(/[\t\n\r]/g, "").trim();
  return /^https?:\/\/\S/i.test(url) ? url : null;
}

/**
 * A URL in text runs from `http(s)://` to whitespace, `<`, `>` or `"` (none may
 * appear unescaped in a URL). One character class, one quantifier: linear.
 */
const TEXT_URL = /https?:\/\/[^\s<>"]+/gi;

/** Characters trimmed from a text URL's end: sentence punctuation, not part of the URL. */
const TRAILING_PUNCTUATION = new Set([".", ",", ";", ":", "!", "?", "'", '"', "*"]);

/** Closers trimmed from a text URL's end only when unbalanced, so `.../Foo_(bar)` keeps its parenthesis. */
const CLOSERS: Record<string, string> = { ")": "(", "]": "[", "}": "{" };

/** Trims trailing punctuation and unbalanced closers from a URL found in text. */
function trimUrl(url: string): string {
  // Counted once up front (and kept up to date while trimming), so a run of ")" stays linear.
  const counts = new Map<string, number>();
  for (const char of url) if (char in CLOSERS || "([{".includes(char)) counts.set(char, (counts.get(char) ?? 0) + 1);
  let end = url.length;
  while (end > 0) {
    const last = url[end - 1] ?? "";
    if (TRAILING_PUNCTUATION.has(last)) {
      end--;
      continue;
    }
    const opener = CLOSERS[last];
    if (opener !== undefined && (counts.get(last) ?? 0) > (counts.get(opener) ?? 0)) {
      counts.set(last, (counts.get(last) ?? 0) - 1);
      end--;
      continue;
    }
    break;
  }
  return url.slice(0, end);
}

/** URLs in plain text, with their offsets. */
export function bareUrls(text: string): Array<{ url: string; index: number }> {
  const found: Array<{ url: string; index: number }> = [];
  for (const match of text.matchAll(TEXT_URL)) {
    const url = trimUrl(match[0]);
    // "https://" followed only by punctuation is not a link.
    if (/^https?:\/\/\S/i.test(url)) found.push({ url, index: match.index });
  }
  return found;
}
