/**
 * One-time codes found in a received mail, so that a test suite can "type the
 * code" without parsing mail itself.
 *
 * Codes trade recall for precision: a wrong code fails a test in a confusing
 * way, a missing one fails it plainly. A candidate of the right shape, not
 * labelled as something else (order, invoice, phone, price, date, address...),
 * is accepted only with a code keyword in its own sentence, or when it stands
 * alone on its line or is emphasised and a word naming a code ("code", "PIN",
 * "OTP", "Bestätigungscode"...) is in the subject or on the lines around it.
 *
 * @module
 */
import { type Candidate, candidates, looksLikeYearOrDate } from "./candidates.ts";
import { walkHtml } from "./html_text.ts";
import { keywordAt, sentenceKeywords, type Strength } from "./keywords.ts";
import { INVISIBLE, type Line, textLines } from "./lines.ts";
import { isFiller, type Token, tokenize } from "./tokens.ts";
import type { MailContent } from "./types.ts";
import { CURRENCIES, DOTTED_LABELS, LABELS, MONTHS, STREET_SUFFIXES, STREET_WORDS, UNITS } from "./words.ts";

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

/** "Friedrichstraße", "Hauptstr.", "Am Mühlenweg": capitalised and ending like a street. */
function isStreetName(raw: string): boolean {
  const word = raw.replace(/[,;:]+$/, "");
  if (!/^\p{Lu}/u.test(word)) return false;
  const lower = word.toLowerCase();
  return STREET_SUFFIXES.some((suffix) => lower.endsWith(suffix) && lower.length > suffix.length + 2);
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
