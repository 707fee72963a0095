/**
 * Lines: the subject, the text body and the HTML all become lists of lines.
 * This file holds the line shape and the text body's lines; the HTML's come
 * from html_text.ts.
 *
 * @module
 */

/** A line of visible text, with the character ranges that were emphasised (HTML only). */
export interface Line {
  text: string;
  emphasis: Array<[number, number]>;
}

/** Zero-width characters that senders sprinkle in preheaders and footers; invisible, so dropped. */
export const INVISIBLE = /[\u00ad\u034f\u200b-\u200d\u2060\ufeff]/g;

/** A text line at least this long without final punctuation was most likely wrapped by the sender. */
const WRAP_WIDTH = 55;

/**
 * Text body lines. Lines of wrapped prose are joined with their continuation so
 * that "Your verification code\nis 123456" (wrapped at 72 columns) stays one
 * sentence; short lines (lists, a code on its own) stay apart.
 */
export function textLines(text: string): Line[] {
  const physical = text.replace(INVISIBLE, "").split(/\r?\n/);
  const lines: Line[] = [];
  let pending = "";
  for (const raw of physical) {
    const line = raw.trim();
    if (line === "") {
      if (pending !== "") lines.push({ text: pending, emphasis: [] });
      pending = "";
      continue;
    }
    pending = pending === "" ? line : `${pending} ${line}`;
    if (line.length < WRAP_WIDTH || /[.!?:]$/.test(line)) {
      lines.push({ text: pending, emphasis: [] });
      pending = "";
    }
  }
  if (pending !== "") lines.push({ text: pending, emphasis: [] });
  return lines;
}
