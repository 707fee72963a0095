/**
 * Code keywords: the words and word pairs that name a one-time code, or come
 * with one, as read in a line's tokens.
 *
 * @module
 */
import type { Token } from "./tokens.ts";
import {
  CODE_COMPOUND_PREFIXES,
  CODE_DE_OK,
  COMMERCE,
  KEYWORD_PAIRS,
  NOT_CODE_AFTER,
  NOT_CODE_BEFORE,
  STRONG_KEYWORDS,
  WEAK_KEYWORDS,
} from "./words.ts";

/** How much a keyword says: "strong" names a code ("code", "PIN"), "weak" only comes with one ("verify", "log in"). */
export type Strength = "strong" | "weak";

/** Whether token i is a code keyword, given its neighbours (which can negate "code"). */
export function keywordAt(tokens: Token[], i: number): Strength | null {
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
export function sentenceKeywords(tokens: Token[]): Map<number, { keyword: Strength | null; commerce: boolean }> {
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
