/**
 * The visible text of an HTML body, as lines, and its links in document order.
 *
 * @module
 */
import { Parser } from "htmlparser2";
import { INVISIBLE, type Line } from "./lines.ts";
import { bareUrls, httpUrl } from "./urls.ts";
import { words } from "./words.ts";

/** A link found in HTML, with where it was found, to merge anchors and bare URLs in document order. */
export interface PlacedLink {
  url: string;
  text: string | null;
  line: number;
  offset: number;
}

/** Elements whose content is never shown in the body. */
const SKIPPED = new Set(["head", "title", "style", "script", "template", "noscript", "xml", "object", "iframe"]);

/** Elements that start a new line of text. */
const BLOCKS = new Set(words(`
  address article aside blockquote body br caption center dd div dl dt fieldset figcaption figure footer form
  h1 h2 h3 h4 h5 h6 header hr html li main nav ol p pre section table tbody tfoot thead tr ul
`));

/** Table cells stay on their row's line, separated by " | ", so "Order number | 12345678" keeps its label. */
const CELLS = new Set(["td", "th"]);

/** Elements that visually emphasise what they contain. */
const EMPHASIS_TAGS = new Set(["b", "strong", "h1", "h2", "h3", "code", "kbd", "samp", "tt", "pre", "big", "mark"]);

/** Parses an inline style into lowercase property -> value, without regexes (sender-controlled). */
function parseStyle(style: string | undefined): Map<string, string> {
  const props = new Map<string, string>();
  if (!style) return props;
  for (const decl of style.toLowerCase().split(";")) {
    const colon = decl.indexOf(":");
    if (colon <= 0) continue;
    props.set(decl.slice(0, colon).trim(), decl.slice(colon + 1).replace("!important", "").trim());
  }
  return props;
}

/** Whether an element is hidden from the reader (preheaders, MSO-only blocks). */
function isHidden(attribs: Record<string, string>, style: Map<string, string>): boolean {
  if ("hidden" in attribs) return true;
  const opacity = style.get("opacity");
  return style.get("display") === "none" || style.get("visibility") === "hidden" ||
    style.get("mso-hide") === "all" || (opacity !== undefined && Number.parseFloat(opacity) === 0);
}

/** A CSS length in px, or NaN. */
function cssPx(value: string | undefined): number {
  if (value === undefined) return Number.NaN;
  const n = Number.parseFloat(value);
  if (value.endsWith("pt")) return n * 4 / 3;
  if (value.endsWith("em") || value.endsWith("rem")) return n * 16;
  return n;
}

/** Whether an element's own style or legacy attributes make its text stand out, as a code usually does. */
function isEmphasised(name: string, attribs: Record<string, string>, style: Map<string, string>): boolean {
  if (EMPHASIS_TAGS.has(name)) return true;
  if (name === "font" && Number.parseInt(attribs.size ?? "", 10) >= 5) return true;
  if (cssPx(style.get("font-size")) >= 20) return true;
  if (cssPx(style.get("letter-spacing")) >= 2) return true;
  const weight = style.get("font-weight");
  return weight === "bold" || weight === "bolder" || Number.parseInt(weight ?? "", 10) >= 600;
}

interface OpenElement {
  skipped: boolean;
  hidden: boolean;
  emphasised: boolean;
  pre: boolean;
  anchor: AnchorState | null;
}

interface AnchorState {
  link: PlacedLink | null;
  parts: string[];
}

/** The visible text of an HTML body as lines, and its links in document order. */
export function walkHtml(html: string): { lines: Line[]; links: PlacedLink[] } {
  const lines: Line[] = [];
  const links: PlacedLink[] = [];
  const stack: OpenElement[] = [];
  const anchors: AnchorState[] = [];
  let skipped = 0;
  let hidden = 0;
  let emphasised = 0;
  let pre = 0;
  // The current line is kept as parts plus its length and last character: reading the end of
  // a growing string flattens it, which made a megabyte of "<" quadratic.
  let parts: string[] = [];
  let length = 0;
  let lastChar = "";
  let emphasis: Array<[number, number]> = [];

  const flush = () => {
    const trimmed = parts.join("").trimEnd();
    if (trimmed !== "") {
      // Leading whitespace is never kept (see append), so offsets stay valid after trimEnd.
      for (const url of bareUrls(trimmed)) {
        links.push({ url: url.url, text: null, line: lines.length, offset: url.index });
      }
      lines.push({ text: trimmed, emphasis });
    }
    parts = [];
    length = 0;
    lastChar = "";
    emphasis = [];
  };

  const append = (chunk: string) => {
    let piece = chunk;
    if (length === 0 || lastChar === " ") piece = piece.trimStart();
    if (piece === "") return;
    const start = length;
    parts.push(piece);
    length += piece.length;
    lastChar = piece[piece.length - 1] ?? "";
    if (emphasised > 0) {
      // Ranges are appended in order; adjacent ones merge so lookups stay a binary search.
      const previous = emphasis.at(-1);
      if (previous && previous[1] === start) previous[1] = length;
      else emphasis.push([start, length]);
    }
  };

  const parser = new Parser({
    onopentag(name, attribs) {
      const style = parseStyle(attribs.style);
      const element: OpenElement = {
        skipped: SKIPPED.has(name),
        hidden: isHidden(attribs, style),
        emphasised: isEmphasised(name, attribs, style),
        pre: name === "pre",
        anchor: null,
      };
      if (BLOCKS.has(name)) flush();
      else if (CELLS.has(name) && length > 0) append(" | ");
      if (name === "a" || name === "area") {
        const url = httpUrl(attribs.href);
        let link: PlacedLink | null = null;
        if (url !== null) {
          link = { url, text: null, line: lines.length, offset: length };
          links.push(link);
        }
        if (name === "a") {
          element.anchor = { link, parts: [] };
          anchors.push(element.anchor);
        }
      }
      if (element.skipped) skipped++;
      if (element.hidden) hidden++;
      if (element.emphasised) emphasised++;
      if (element.pre) pre++;
      stack.push(element);
    },
    onclosetag(name) {
      // htmlparser2 pairs every open with a close (implied ones included), so the top is this element.
      const element = stack.pop();
      if (!element) return;
      if (element.skipped) skipped--;
      if (element.hidden) hidden--;
      if (element.emphasised) emphasised--;
      if (element.pre) pre--;
      if (element.anchor) {
        anchors.pop();
        if (element.anchor.link) element.anchor.link.text = collapse(element.anchor.parts.join("")) || null;
      }
      if (BLOCKS.has(name)) flush();
    },
    ontext(data) {
      if (skipped > 0 || hidden > 0) return;
      const visible = data.replace(INVISIBLE, "");
      anchors.at(-1)?.parts.push(visible);
      if (pre > 0) {
        // Preformatted text keeps its line breaks.
        visible.split("\n").forEach((piece, i) => {
          if (i > 0) flush();
          append(piece.replace(/\s+/g, " "));
        });
      } else {
        append(visible.replace(/\s+/g, " "));
      }
    },
  }, { decodeEntities: true });
  parser.write(html);
  parser.end();
  flush();
  return { lines, links };
}

/** Collapses runs of whitespace (nbsp included) and trims. */
function collapse(text: string): string {
  return text.replace(/\s+/g, " ").trim();
}
