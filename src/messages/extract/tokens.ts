/**
 * Tokens: whitespace-separated words of a line, with punctuation peeled off.
 *
 * @module
 */
import { ABBREVIATIONS } from "./words.ts";

/** A word of a line, where it stands, and which sentence of the line it belongs to. */
export interface Token {
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

/** Longer tokens cannot be codes or keywords; skipping them keeps hostile lines cheap. */
const MAX_TOKEN = 64;

/** The tokens of a line, each with its sentence index; "Code:123456" becomes two tokens. */
export function tokenize(text: string): Token[] {
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
export function isFiller(token: Token): boolean {
  return !token.opaque && (token.core === "" || /^[|•·–—\-=~:/]+$/.test(token.core));
}
