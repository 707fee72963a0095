/**
 * One-time codes and links found in a received mail, so that a test suite can
 * "type the code" or "click the link" without parsing mail itself.
 *
 * Pure and synchronous: no I/O, no clock. Hostile input (a sender controls
 * every byte) must neither hang nor throw, so text is handled by a linear
 * tokenizer and a handful of anchored or single-quantifier regexes, and HTML by
 * htmlparser2's streaming state machine; a public function that somehow fails
 * returns an empty list rather than breaking message storage.
 *
 * Codes trade recall for precision: a wrong code fails a test in a confusing
 * way, a missing one fails it plainly. A candidate of the right shape, not
 * labelled as something else (order, invoice, phone, price, date, address...),
 * is accepted only with a code keyword in its own sentence, or when it stands
 * alone on its line or is emphasised and a word naming a code ("code", "PIN",
 * "OTP", "Bestätigungscode"...) is in the subject or on the lines around it.
 */
import { Parser } from "htmlparser2";

/** The parts of a stored message that codes and links are taken from. */
export interface MailContent {
  subject: string;
  text: string | null;
  html: string | null;
}

/** An http(s) link: its URL and, for an HTML anchor, its visible text. */
export interface Link {
  url: string;
  /** The anchor's visible text, whitespace collapsed; null when empty or from the text body. */
  text: string | null;
}

/**
 * One-time codes a person would type, in order of appearance (subject, text
 * body, visible HTML text), each once. Digits codes lose a single inner space
 * or hyphen (`123 456` -> `123456`).
 */
export function extractCodes(mail: MailContent): string[] {
  try {
    return findCodes(mail);
  } catch {
    // Never expected; a code extractor must not make a message unreadable.
    return [];
  }
}

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

// ---------------------------------------------------------------------------
// Lines: the subject, the text body and the HTML all become lists of lines.

/** A line of visible text, with the character ranges that were emphasised (HTML only). */
interface Line {
  text: string;
  emphasis: Array<[number, number]>;
}

/** Zero-width characters that senders sprinkle in preheaders and footers; invisible, so dropped. */
const INVISIBLE = /[\u00ad\u034f\u200b-\u200d\u2060\ufeff]/g;

/** A text line at least this long without final punctuation was most likely wrapped by the sender. */
const WRAP_WIDTH = 55;

/**
 * Text body lines. Lines of wrapped prose are joined with their continuation so
 * that "Your verification code\nis 123456" (wrapped at 72 columns) stays one
 * sentence; short lines (lists, a code on its own) stay apart.
 */
function textLines(text: string): Line[] {
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

/** A link found in HTML, with where it was found, to merge anchors and bare URLs in document order. */
interface PlacedLink {
  url: string;
  text: string | null;
  line: number;
  offset: number;
}

/** Elements whose content is never shown in the body. */
const SKIPPED = new Set(["head", "title", "style", "script", "template", "noscript", "xml", "object", "iframe"]);

/** Elements that start a new line of text. */
const BLOCKS = new Set([
  "address",
  "article",
  "aside",
  "blockquote",
  "body",
  "br",
  "caption",
  "center",
  "dd",
  "div",
  "dl",
  "dt",
  "fieldset",
  "figcaption",
  "figure",
  "footer",
  "form",
  "h1",
  "h2",
  "h3",
  "h4",
  "h5",
  "h6",
  "header",
  "hr",
  "html",
  "li",
  "main",
  "nav",
  "ol",
  "p",
  "pre",
  "section",
  "table",
  "tbody",
  "tfoot",
  "thead",
  "tr",
  "ul",
]);

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
function walkHtml(html: string): { lines: Line[]; links: PlacedLink[] } {
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

// ---------------------------------------------------------------------------
// Links.

/** An href's URL when it is http(s), else null (mailto:, tel:, #fragment, relative, javascript:). */
function httpUrl(href: string | undefined): string | null {
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
function bareUrls(text: string): Array<{ url: string; index: number }> {
  const found: Array<{ url: string; index: number }> = [];
  for (const match of text.matchAll(TEXT_URL)) {
    const url = trimUrl(match[0]);
    // "https://" followed only by punctuation is not a link.
    if (/^https?:\/\/\S/i.test(url)) found.push({ url, index: match.index });
  }
  return found;
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

// ---------------------------------------------------------------------------
// Tokens: whitespace-separated words of a line, with punctuation peeled off.

interface Token {
  raw: string;
  /** The token without surrounding punctuation. */
  core: string;
  /** Lowercased core, for word lists. */
  norm: string;
  start: number;
  end: number;
  /** Index of the sentence (within the line) the token belongs to. */
  sentence: number;
  /** A URL, an email address or an over-long token: never a code, never a keyword. */
  opaque: boolean;
}

/** Punctuation peeled off a token's ends: quotes, brackets, markdown emphasis and backticks. */
const LEADING = new Set([..."([\"'“‘«¿¡{*_<`"]);
const TRAILING = new Set([...")]}\"'”’».,;:!?*_>`"]);

/** Abbreviations whose final dot does not end a sentence. */
const ABBREVIATIONS = new Set([
  "no",
  "nr",
  "st",
  "dr",
  "mr",
  "mrs",
  "ms",
  "eg",
  "e.g",
  "i.e",
  "ie",
  "vs",
  "ca",
  "tel",
  "str",
  "av",
  "apt",
  "ste",
  "inc",
  "ltd",
  "co",
  "approx",
  "z.b",
  "bzw",
  "sr",
  "jr",
]);

/** Longer tokens cannot be codes or keywords; skipping them keeps hostile lines cheap. */
const MAX_TOKEN = 64;

function tokenize(text: string): Token[] {
  const tokens: Token[] = [];
  let sentence = 0;
  for (const match of text.matchAll(/\S+/g)) {
    const raw = match[0];
    const start = match.index;
    const lower = raw.toLowerCase();
    const opaque = raw.length > MAX_TOKEN || raw.includes("@") || lower.includes("://") || lower.startsWith("www.");
    let a = 0;
    let b = raw.length;
    if (!opaque) {
      while (a < b && LEADING.has(raw[a] ?? "")) a++;
      while (b > a && TRAILING.has(raw[b - 1] ?? "")) b--;
    }
    const core = opaque ? "" : raw.slice(a, b);
    // "Code:123456" is a label glued to its value: split it so each half is judged on its own.
    const colon = core.indexOf(":");
    if (colon > 0 && colon < core.length - 1 && /^\p{L}+$/u.test(core.slice(0, colon))) {
      const label = core.slice(0, colon);
      const value = core.slice(colon + 1);
      tokens.push({
        raw: label + ":",
        core: label,
        norm: label.toLowerCase(),
        start,
        end: start + a + colon + 1,
        sentence,
        opaque,
      });
      tokens.push({
        raw: raw.slice(a + colon + 1),
        core: value,
        norm: value.toLowerCase(),
        start: start + a + colon + 1,
        end: start + raw.length,
        sentence,
        opaque,
      });
    } else {
      tokens.push({ raw, core, norm: core.toLowerCase(), start, end: start + raw.length, sentence, opaque });
    }
    if (!opaque && endsSentence(raw, core)) sentence++;
  }
  return tokens;
}

/**
 * Whether a token closes its sentence: `.`, `!` or `?` at its end, unless it is
 * an abbreviation ("No.") or a one- or two-digit ordinal ("14. Mai", "3. Step").
 */
function endsSentence(raw: string, core: string): boolean {
  let end = raw.length;
  while (end > 0 && `)]}"'”’»`.includes(raw[end - 1] ?? "")) end--;
  const last = raw[end - 1];
  if (last === "!" || last === "?") return true;
  if (last !== ".") return false;
  return !ABBREVIATIONS.has(core.toLowerCase()) && !/^\d{1,2}$/.test(core);
}

/** A token that is only punctuation or a separator, skipped when looking at a candidate's neighbours. */
function isFiller(token: Token): boolean {
  return !token.opaque && (token.core === "" || /^[|•·–—\-=~:/]+$/.test(token.core));
}

// ---------------------------------------------------------------------------
// Word lists. Lowercase; they describe kinds of text, never particular mails.

/** Words that name a one-time code. */
const STRONG_KEYWORDS = new Set([
  "code",
  "codes",
  "otp",
  "totp",
  "pin",
  "passcode",
  "one-time",
  "2fa",
  "mfa",
  "tan",
  "mtan",
  "código",
  "codigo",
  "clave",
  "einmalpasswort",
  "einmalkennwort",
  "kode",
]);

/** Prefixes of compounds ending in "code" that are code words (German writes them as one word). */
const CODE_COMPOUND_PREFIXES = [
  "bestätigungs",
  "verifizierungs",
  "verifikations",
  "sicherheits",
  "anmelde",
  "login",
  "einmal",
  "zugangs",
  "aktivierungs",
  "freischalt",
  "authentifizierungs",
  "pass",
  "pin",
  "otp",
  "2fa",
  "sms",
  "e-mail",
  "email",
  "auth",
  "verification",
  "security",
  "sign-in",
  "signin",
  "access",
];

/** Words that come with a code without naming it: enough in its sentence, or on the lines around it. */
const WEAK_KEYWORDS = new Set([
  "verification",
  "verify",
  "verifying",
  "confirm",
  "authentication",
  "authenticate",
  "login",
  "log-in",
  "sign-in",
  "signin",
  "two-factor",
  "bestätigen",
  "verifizierung",
  "verifizieren",
  "anmeldung",
  "anmelden",
  "authentifizierung",
  "verificación",
  "verificacion",
  "verificar",
  "confirmar",
  "autenticación",
  "vérification",
  "vérifier",
  "confirmer",
  "authentification",
  "connexion",
]);

/** Two-word keywords: [first, second, strength]. */
const KEYWORD_PAIRS: Array<[string, string, "strong" | "weak"]> = [
  ["one", "time", "strong"],
  ["single", "use", "strong"],
  ["usage", "unique", "strong"],
  ["solo", "uso", "strong"],
  ["two", "factor", "weak"],
  ["sign", "in", "weak"],
  ["log", "in", "weak"],
  ["inicio", "sesión", "weak"],
];

/** Words before "code" that make it some other kind of code. */
const NOT_CODE_BEFORE = new Set([
  "promo",
  "promotional",
  "discount",
  "coupon",
  "voucher",
  "gift",
  "referral",
  "postal",
  "zip",
  "area",
  "country",
  "dress",
  "qr",
  "bar",
  "tracking",
  "error",
  "status",
  "http",
  "source",
  "sample",
  "example",
  "dial",
  "sort",
  "swift",
  "tax",
  "product",
  "colour",
  "color",
  "html",
  "css",
  "open",
  "clean",
  "legacy",
  "machine",
  "morse",
  "write",
  "writing",
  "ship",
  "shipping",
]);

/** Words after "code" (or código, code in French) that make it some other kind of code. */
const NOT_CODE_AFTER = new Set([
  "of",
  "review",
  "reviews",
  "base",
  "editor",
  "snippet",
  "snippets",
  "samples",
  "examples",
  "quality",
  "coverage",
  "postal",
  "promo",
  "promocional",
  "promotionnel",
  "qr",
  "fuente",
  "source",
]);

/**
 * After "code de"/"código de": these make it a code to type; anything else
 * ("código de descuento", "code de réduction") does not.
 */
const CODE_DE_OK = new Set([
  "verificación",
  "verificacion",
  "vérification",
  "confirmation",
  "confirmación",
  "seguridad",
  "sécurité",
  "connexion",
  "acceso",
  "accès",
  "activation",
  "activación",
  "inicio",
  "un",
  "usage",
]);

/** Words that put a sentence in a shop or a newsletter: its codes are promotions, not one-time codes. */
const COMMERCE = new Set([
  "promo",
  "promotional",
  "promocode",
  "coupon",
  "coupons",
  "discount",
  "discounts",
  "voucher",
  "vouchers",
  "referral",
  "checkout",
  "gutschein",
  "gutscheincode",
  "rabatt",
  "rabattcode",
  "aktionscode",
  "descuento",
  "descuentos",
  "cupón",
  "cupon",
  "promoción",
  "promocion",
  "réduction",
  "remise",
  "soldes",
]);

/**
 * Words that label the number after them as something other than a code:
 * orders, invoices, accounts, addresses, phones, cards, pages, quantities.
 */
const LABELS = new Set([
  "order",
  "orders",
  "bestellung",
  "bestellnummer",
  "auftrag",
  "auftragsnummer",
  "pedido",
  "commande",
  "invoice",
  "rechnung",
  "rechnungsnummer",
  "factura",
  "facture",
  "receipt",
  "quittung",
  "recibo",
  "reçu",
  "ref",
  "reference",
  "referenz",
  "referencia",
  "référence",
  "account",
  "acct",
  "konto",
  "cuenta",
  "compte",
  "customer",
  "kunde",
  "kundennummer",
  "cliente",
  "client",
  "member",
  "membership",
  "mitgliedsnummer",
  "case",
  "ticket",
  "tracking",
  "sendung",
  "sendungsnummer",
  "seguimiento",
  "suivi",
  "shipment",
  "package",
  "parcel",
  "paket",
  "colis",
  "envío",
  "item",
  "sku",
  "article",
  "artikel",
  "model",
  "room",
  "zimmer",
  "suite",
  "apt",
  "unit",
  "flight",
  "flug",
  "vuelo",
  "gate",
  "seat",
  "box",
  "po",
  "zip",
  "postcode",
  "postal",
  "plz",
  "tel",
  "telephone",
  "telefon",
  "teléfono",
  "téléphone",
  "phone",
  "fax",
  "call",
  "mobile",
  "mobil",
  "móvil",
  "ext",
  "id",
  "transaction",
  "txn",
  "booking",
  "buchung",
  "reserva",
  "reservation",
  "réservation",
  "number",
  "nummer",
  "número",
  "numéro",
  "issue",
  "episode",
  "version",
  "build",
  "release",
  "pr",
  "commit",
  "ending",
  "endet",
  "terminada",
  "last",
  "card",
  "karte",
  "tarjeta",
  "carte",
  "iban",
  "bic",
  "vat",
  "ust-idnr",
  "tax",
  "nif",
  "cif",
  "siret",
  "employee",
  "patient",
  "policy",
  "claim",
  "serial",
  "imei",
  "lot",
  "batch",
  "week",
  "kw",
  "step",
  "year",
  "jahr",
  "año",
  "année",
  "since",
  "seit",
  "desde",
  "depuis",
  "total",
  "subtotal",
  "amount",
  "betrag",
  "summe",
  "importe",
  "montant",
  "price",
  "preis",
  "precio",
  "prix",
  "qty",
  "quantity",
  "menge",
  "cantidad",
  "quantité",
  // Quantities: "up to 10000", "over 2500", "more than 1200", "bis zu 5000".
  "up",
  "over",
  "than",
  "about",
  "approximately",
  "around",
  "nearly",
  "almost",
  "least",
  "includes",
  "including",
  "additional",
  "extra",
  "top",
  "zu",
  "hasta",
  "environ",
  "©",
  "(c)",
  "copyright",
  "#",
  "№",
  "n°",
  "nº",
]);

/** Labels that are ordinary words unless written as abbreviations ("No. 1234", not "no 1234"). */
const DOTTED_LABELS = new Set(["no", "nr", "núm", "num"]);

const CURRENCIES = new Set([
  "$",
  "€",
  "£",
  "¥",
  "usd",
  "eur",
  "gbp",
  "chf",
  "jpy",
  "cad",
  "aud",
  "sek",
  "nok",
  "dkk",
  "pln",
  "mxn",
  "brl",
  "inr",
  "us$",
  "euro",
  "euros",
  "dollar",
  "dollars",
  "pounds",
  "dólares",
]);

const MONTHS = new Set([
  "jan",
  "january",
  "feb",
  "february",
  "mar",
  "march",
  "apr",
  "april",
  "may",
  "jun",
  "june",
  "jul",
  "july",
  "aug",
  "august",
  "sep",
  "sept",
  "september",
  "oct",
  "october",
  "nov",
  "november",
  "dec",
  "december",
  "januar",
  "jänner",
  "februar",
  "märz",
  "mai",
  "juni",
  "juli",
  "oktober",
  "dezember",
  "enero",
  "febrero",
  "marzo",
  "abril",
  "mayo",
  "junio",
  "julio",
  "agosto",
  "septiembre",
  "setiembre",
  "octubre",
  "noviembre",
  "diciembre",
  "janvier",
  "février",
  "mars",
  "avril",
  "juin",
  "juillet",
  "août",
  "septembre",
  "octobre",
  "novembre",
  "décembre",
]);

/** Words after a number that make it a quantity, an amount, a duration or a time. */
const UNITS = new Set([
  ...CURRENCIES,
  "%",
  "items",
  "item",
  "artikel",
  "artículos",
  "articles",
  "units",
  "pcs",
  "stück",
  "stk",
  "x",
  "users",
  "members",
  "subscribers",
  "readers",
  "people",
  "customers",
  "followers",
  "views",
  "downloads",
  "stars",
  "votes",
  "words",
  "pages",
  "steps",
  "km",
  "mi",
  "miles",
  "meters",
  "m",
  "kg",
  "g",
  "lb",
  "lbs",
  "gb",
  "mb",
  "kb",
  "tb",
  "mhz",
  "ghz",
  "mph",
  "kcal",
  "cal",
  "uhr",
  "h",
  "hrs",
  "hours",
  "minutes",
  "min",
  "mins",
  "seconds",
  "sec",
  "days",
  "tage",
  "días",
  "jours",
  "weeks",
  "months",
  "years",
  "jahre",
  "años",
  "ans",
  "utc",
  "gmt",
  "cet",
  "cest",
  "est",
  "edt",
  "pst",
  "pdt",
  "am",
  "pm",
  "a.m",
  "p.m",
  "ft",
  "feet",
  "sq",
  "ms",
  "points",
  "pts",
  "credits",
  "calories",
  "rpm",
  "kwh",
  "mah",
  "dpi",
  "px",
  "ppm",
]);

/** Words of a street address; any in a line makes its numbers house numbers and postcodes. */
const STREET_WORDS = new Set([
  "Street",
  "St",
  "Ave",
  "Avenue",
  "Road",
  "Rd",
  "Blvd",
  "Boulevard",
  "Lane",
  "Ln",
  "Drive",
  "Dr",
  "Way",
  "Parkway",
  "Pkwy",
  "Suite",
  "Ste",
  "Floor",
  "Fl",
  "Court",
  "Ct",
  "Terrace",
  "Highway",
  "Hwy",
  "Square",
  "Sq",
  "Plaza",
  "Building",
  "Bldg",
  "Straße",
  "Strasse",
  "Str",
  "Weg",
  "Platz",
  "Allee",
  "Gasse",
  "Calle",
  "Avenida",
  "Av",
  "Paseo",
  "Rue",
  "Bd",
  "Chemin",
  "Place",
  "Quai",
  "calle",
  "rue",
  "avenue",
  "avenida",
  "boulevard",
  "paseo",
  "quai",
]);

/** Endings of one-word German street names (Friedrichstraße 12). */
const STREET_SUFFIXES = ["straße", "strasse", "str.", "weg", "allee", "platz", "gasse", "damm", "ufer", "chaussee"];

/** "Friedrichstraße", "Hauptstr.", "Am Mühlenweg": capitalised and ending like a street. */
function isStreetName(raw: string): boolean {
  const word = raw.replace(/[,;:]+$/, "");
  if (!/^\p{Lu}/u.test(word)) return false;
  const lower = word.toLowerCase();
  return STREET_SUFFIXES.some((suffix) => lower.endsWith(suffix) && lower.length > suffix.length + 2);
}

// ---------------------------------------------------------------------------
// Codes.

type Strength = "strong" | "weak";

/** Whether token i is a code keyword, given its neighbours (which can negate "code"). */
function keywordAt(tokens: Token[], i: number): Strength | null {
  const token = tokens[i];
  if (!token || token.opaque) return null;
  const word = token.norm;
  const prev = tokens[i - 1]?.norm ?? "";
  const next = tokens[i + 1]?.norm ?? "";
  const isCodeWord = word === "code" || word === "codes" || word === "código" || word === "codigo" || word === "kode";
  if (isCodeWord) {
    if (NOT_CODE_BEFORE.has(prev)) return null;
    if (next === "de") return CODE_DE_OK.has(tokens[i + 2]?.norm ?? "") ? "strong" : null;
    if (NOT_CODE_AFTER.has(next)) return null;
    return "strong";
  }
  if (STRONG_KEYWORDS.has(word)) return "strong";
  if (word.endsWith("code") || word.endsWith("codes") || word.endsWith("-code")) {
    const stem = word.replace(/-?codes?$/, "");
    return CODE_COMPOUND_PREFIXES.some((prefix) => stem === prefix || stem === `${prefix}-`) ? "strong" : null;
  }
  if (WEAK_KEYWORDS.has(word)) return "weak";
  for (const [first, second, strength] of KEYWORD_PAIRS) {
    if ((word === first && next === second) || (word === second && prev === first)) return strength;
  }
  return null;
}

/** Per sentence of a line: the strongest keyword in it, unless it reads as commerce. */
function sentenceKeywords(tokens: Token[]): Map<number, { keyword: Strength | null; commerce: boolean }> {
  const sentences = new Map<number, { keyword: Strength | null; commerce: boolean }>();
  const sawPercent = new Set<number>();
  tokens.forEach((token, i) => {
    const entry = sentences.get(token.sentence) ?? { keyword: null, commerce: false };
    sentences.set(token.sentence, entry);
    if (token.core.endsWith("%")) sawPercent.add(token.sentence);
    if (COMMERCE.has(token.norm) || (token.norm === "off" && sawPercent.has(token.sentence))) entry.commerce = true;
    const keyword = keywordAt(tokens, i);
    if (keyword === "strong" || (keyword === "weak" && entry.keyword === null)) entry.keyword = keyword;
  });
  for (const entry of sentences.values()) if (entry.commerce) entry.keyword = null;
  return sentences;
}

/** A line prepared for code finding. */
interface Analysed {
  line: Line;
  tokens: Token[];
  sentences: Map<number, { keyword: Strength | null; commerce: boolean }>;
  /**
   * A sentence of the line names a code ("code", "PIN", "OTP"...). Only such
   * strong words vouch for a code on another line: "Log in to see more" next
   * to a big "1284" does not.
   */
  namesCode: boolean;
  /** Tokens that are not mere punctuation. */
  words: number;
  /** A street word makes every number in the line part of an address. */
  address: boolean;
}

function analyse(line: Line): Analysed {
  const tokens = tokenize(line.text);
  const sentences = sentenceKeywords(tokens);
  let namesCode = false;
  for (const entry of sentences.values()) if (entry.keyword === "strong") namesCode = true;
  const address = tokens.some((t) => !t.opaque && (STREET_WORDS.has(t.core) || isStreetName(t.raw)));
  return { line, tokens, sentences, namesCode, address, words: tokens.filter((t) => !isFiller(t)).length };
}

/** A possible code: tokens [first, last] of a line, and its normalised value. */
interface Candidate {
  first: number;
  last: number;
  value: string;
  digits: boolean;
}

/** Digits groups and phone punctuation, e.g. `+49`, `(415)`, `555-0132`, `030`. */
function isDigitish(token: Token): boolean {
  return !token.opaque && token.core.length <= 20 && /^[+(]*\d[\d().\-/]*$/.test(token.core);
}

/**
 * A line of nothing but 4 to 8 single characters ("6 | 0 | 4 | 2 | 9 | 7"):
 * a code drawn one box (table cell) per character.
 */
function boxedCode(tokens: Token[]): Candidate | null {
  if (tokens.length > 2 * 8 + 1) return null;
  let value = "";
  let first = -1;
  let last = -1;
  for (const [i, token] of tokens.entries()) {
    if (isFiller(token)) continue;
    if (token.opaque || !/^[A-Z0-9]$/.test(token.raw)) return null;
    value += token.raw;
    if (first < 0) first = i;
    last = i;
  }
  const digits = /^\d{4,8}$/.test(value);
  const alphanumeric = /^[A-Z0-9]{6,8}$/.test(value) && /[A-Z]/.test(value) && /\d/.test(value);
  return digits || alphanumeric ? { first, last, value, digits } : null;
}

/** Candidate tokens of a line: shapes only; context is judged later. */
function candidates(tokens: Token[], text: string): Candidate[] {
  const boxed = boxedCode(tokens);
  if (boxed) return [boxed];
  const found: Candidate[] = [];
  let i = 0;
  while (i < tokens.length) {
    const token = tokens[i];
    if (!token) break;
    if (!isDigitish(token)) {
      const value = token.core;
      const prefixed = token.opaque ? null : singleDigitsValue(value);
      if (prefixed !== null) {
        found.push({ first: i, last: i, value: prefixed, digits: true });
        i++;
        continue;
      }
      if (
        !token.opaque && value.length >= 6 && value.length <= 8 && /^[A-Z0-9]+$/.test(value) &&
        /[A-Z]/.test(value) && /\d/.test(value) && !looksLikeWordAndNumber(value)
      ) {
        found.push({ first: i, last: i, value, digits: false });
      }
      i++;
      continue;
    }
    // A run of adjacent number groups: a phone number, a card or tracking number, unless it is
    // exactly two equal groups of 3 or 4 digits with one space between ("123 456").
    let end = i;
    while (end + 1 < tokens.length && isDigitish(tokens[end + 1] as Token)) end++;
    const run = tokens.slice(i, end + 1);
    if (run.length === 1) {
      const value = singleDigitsValue(token.core);
      if (value !== null) found.push({ first: i, last: i, value, digits: true });
    } else {
      const [a, b] = run;
      const totalDigits = run.reduce((n, t) => n + t.core.replace(/\D/g, "").length, 0);
      const phoneLike = run.some((t) => /[+()]/.test(t.core)) || totalDigits > 8 || run.length > 2;
      if (
        run.length === 2 && a && b && /^\d{3,4}$/.test(a.raw) && /^\d{3,4}$/.test(b.core) &&
        a.raw.length === b.core.length && text.slice(a.end, b.start) === " " && b.raw.startsWith(b.core)
      ) {
        found.push({ first: i, last: i + 1, value: a.raw + b.core, digits: true });
      } else if (!phoneLike) {
        run.forEach((t, k) => {
          const value = singleDigitsValue(t.core);
          if (value !== null) found.push({ first: i + k, last: i + k, value, digits: true });
        });
      }
    }
    i = end + 1;
  }
  return found;
}

/**
 * `123456`, or `123-456` / `1234-5678` (equal halves) without the hyphen, or
 * the digits of a one-letter-prefixed code (`G-123456`, where the sign-in form
 * shows the prefix and the person types the digits); else null.
 */
function singleDigitsValue(core: string): string | null {
  if (/^\d{4,8}$/.test(core)) return core;
  if (/^[A-Z]-\d{4,8}$/.test(core)) return core.slice(2);
  const hyphen = /^(\d{3,4})-(\d{3,4})$/.exec(core);
  if (hyphen && hyphen[1] && hyphen[2] && hyphen[1].length === hyphen[2].length) return hyphen[1] + hyphen[2];
  return null;
}

/** SAVE20, SPRING24, 25SAVE: a word and a number, the shape of promotions and models, not of random codes. */
function looksLikeWordAndNumber(value: string): boolean {
  return /^[A-Z]{4,}\d{1,4}$/.test(value) || /^\d{1,3}[A-Z]{4,}$/.test(value);
}

/** 19xx/20xx, or a YYYYMMDD / DDMMYYYY date: only a code when a code word says so right before it. */
function looksLikeYearOrDate(value: string): boolean {
  const year = (s: string) => /^(19|20)\d\d$/.test(s);
  const month = (s: string) => Number(s) >= 1 && Number(s) <= 12;
  const day = (s: string) => Number(s) >= 1 && Number(s) <= 31;
  if (value.length === 4) return year(value);
  if (value.length === 8) {
    if (year(value.slice(0, 4)) && year(value.slice(4))) return true; // 2023-2024
    if (year(value.slice(0, 4)) && month(value.slice(4, 6)) && day(value.slice(6))) return true;
    if (day(value.slice(0, 2)) && month(value.slice(2, 4)) && year(value.slice(4))) return true;
  }
  return false;
}

/** How many tokens before a candidate are looked at for a label or a keyword. */
const LOOK_BEHIND = 3;
/** A previous line of at most this many words is a label for the candidate below it. */
const SHORT_LABEL_LINE = 4;
/** Bounds the walk over filler tokens ("| | |"), so hostile lines stay linear. */
const MAX_WALK = 8;

/**
 * What the words just before a candidate say, nearest first: a keyword ("code:",
 * "PIN") wins, a label ("Order", "No.", "©", a currency, a month, a masked
 * card "••••") rejects. When the candidate starts its line, the end of the
 * previous line is read: a short label line ("Order number:\n12345678") rejects,
 * while a sentence that happens to end in a label word ("…for your account:")
 * does not.
 */
function lookBehind(
  tokens: Token[],
  first: number,
  previous: Token[] | undefined,
  yearLike: boolean,
): { verdict: "label" | Strength | null; distance: number } {
  let seen = 0;
  let walked = 0;
  let list = tokens;
  let i = first - 1;
  let labelsCount = true;
  while (seen < LOOK_BEHIND && walked < MAX_WALK) {
    if (i < 0) {
      if (list === tokens && previous && previous.length > 0) {
        list = previous;
        i = previous.length - 1;
        labelsCount = previous.length <= SHORT_LABEL_LINE;
        continue;
      }
      break;
    }
    const token = list[i] as Token;
    walked++;
    i--;
    if (isFiller(token)) continue;
    seen++;
    if (token.opaque) continue;
    const keyword = keywordAt(list, i + 1);
    if (keyword !== null) return { verdict: keyword, distance: seen };
    if (!labelsCount) continue;
    const label = { verdict: "label" as const, distance: seen };
    const norm = token.norm;
    if (LABELS.has(norm) || CURRENCIES.has(norm)) return label;
    if (DOTTED_LABELS.has(norm) && /[.:]$/.test(token.raw)) return label;
    if (/^[•*xX·]{2,}$/.test(token.core) || /^[•*·]+$/.test(token.raw)) return label;
    // Months only matter to years: "May 2024", "15 May 2024", "May 15, 2024".
    if (yearLike && MONTHS.has(norm)) return label;
    if (yearLike && /^\d{1,2}[.,]?$/.test(token.raw) && seen === 1 && MONTHS.has(list[i]?.norm ?? "")) return label;
  }
  return { verdict: null, distance: 0 };
}

/** Rejections that look after the candidate: units, currencies, percentages, postcodes followed by a city. */
function followedByNonCode(tokens: Token[], candidate: Candidate): boolean {
  const next = tokens[candidate.last + 1];
  if (!next) return false;
  const last = tokens[candidate.last] as Token;
  if (last.raw.endsWith(",") || last.raw.endsWith(".") || last.raw.endsWith(";")) return false;
  if (next.opaque || isFiller(next)) return false;
  if (UNITS.has(next.norm) || next.core.startsWith("%")) return true;
  if (/^[.,]\d/.test(next.raw)) return true; // "1234 .00"
  if (candidate.value.length <= 5) {
    // Postcode before a city ("10115 Berlin") or a Dutch postcode ("1012 AB").
    if (/^\p{Lu}\p{L}{2,}/u.test(next.core) && keywordAt(tokens, candidate.last + 1) === null) return true;
    if (/^[A-Z]{2}$/.test(next.core)) return true;
  }
  return false;
}

/** Whether nothing but punctuation shares the line with the candidate. */
function standsAlone(analysed: Analysed, candidate: Candidate): boolean {
  let own = 0;
  for (let i = candidate.first; i <= candidate.last; i++) if (!isFiller(analysed.tokens[i] as Token)) own++;
  return own === analysed.words;
}

/** Whether the candidate's text was emphasised in the HTML (ranges are sorted and disjoint). */
function emphasised(line: Line, token: Token): boolean {
  const ranges = line.emphasis;
  let low = 0;
  let high = ranges.length - 1;
  while (low <= high) {
    const mid = (low + high) >> 1;
    const [start, end] = ranges[mid] as [number, number];
    if (token.end <= start) high = mid - 1;
    else if (token.start >= end) low = mid + 1;
    // Surrounding punctuation may fall outside the emphasis ("<b>123456</b>.").
    else return start <= token.start + 1 && token.end - 1 <= end;
  }
  return false;
}

/** Whether a line around a prominent candidate names a code. */
function nearbyHasKeyword(lines: Analysed[], index: number): boolean {
  // The two lines before (the instruction usually precedes the code) and the one after.
  return Boolean(lines[index - 1]?.namesCode || lines[index - 2]?.namesCode || lines[index + 1]?.namesCode);
}

/** Accepted codes of one source (subject, text or HTML), in order. */
function codesOf(lines: Analysed[], subjectNamesCode: boolean): string[] {
  const codes: string[] = [];
  lines.forEach((analysed, index) => {
    const { tokens, sentences, line } = analysed;
    for (const candidate of candidates(tokens, line.text)) {
      const first = tokens[candidate.first] as Token;
      const sentence = sentences.get(first.sentence);
      if (sentence?.commerce) continue;
      if (candidate.digits && analysed.address) continue;
      const yearLike = candidate.digits && looksLikeYearOrDate(candidate.value);
      const { verdict: behind, distance } = lookBehind(tokens, candidate.first, lines[index - 1]?.tokens, yearLike);
      if (behind === "label") continue;
      if (candidate.digits && followedByNonCode(tokens, candidate)) continue;
      if (candidate.digits && candidate.value.length === 5) {
        // US state before a ZIP code: "CA 94107".
        const before = tokens[candidate.first - 1];
        if (before && /^[A-Z]{2}$/.test(before.core)) continue;
      }
      const alone = standsAlone(analysed, candidate);
      if (yearLike) {
        // A year only counts when a code word introduces it directly ("PIN: 2019", "code is 2019").
        if (behind === "strong" && distance <= 2) codes.push(candidate.value);
        continue;
      }
      if (sentence?.keyword) {
        codes.push(candidate.value);
        continue;
      }
      const prominent = alone || emphasised(line, first);
      if (prominent && (subjectNamesCode || behind === "strong" || nearbyHasKeyword(lines, index))) {
        codes.push(candidate.value);
      }
    }
  });
  return codes;
}

function findCodes(mail: MailContent): string[] {
  const subject = typeof mail.subject === "string" ? mail.subject.replace(INVISIBLE, "").replace(/\s+/g, " ") : "";
  const subjectLines = subject.trim() === "" ? [] : [analyse({ text: subject.trim(), emphasis: [] })];
  const subjectNamesCode = subjectLines.some((line) => line.namesCode);
  const sources: Analysed[][] = [subjectLines];
  if (typeof mail.text === "string") sources.push(textLines(mail.text).map(analyse));
  if (typeof mail.html === "string" && mail.html !== "") sources.push(walkHtml(mail.html).lines.map(analyse));

  const codes: string[] = [];
  const seen = new Set<string>();
  for (const lines of sources) {
    for (const code of codesOf(lines, subjectNamesCode)) {
      if (seen.has(code)) continue;
      seen.add(code);
      codes.push(code);
    }
  }
  return codes;
}
