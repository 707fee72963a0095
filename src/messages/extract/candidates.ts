/**
 * Code candidates: the tokens of a line shaped like a one-time code, and the
 * value a person would type. Shapes only; context is judged in codes.ts.
 *
 * @module
 */
import { isFiller, type Token } from "./tokens.ts";

/** A possible code: tokens [first, last] of a line, and its normalised value. */
export interface Candidate {
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
export function candidates(tokens: Token[], text: string): Candidate[] {
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
export function looksLikeYearOrDate(value: string): boolean {
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
