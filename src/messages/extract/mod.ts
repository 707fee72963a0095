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
 * How codes are told from other numbers is described in codes.ts.
 *
 * @module
 */
export { extractCodes } from "./codes.ts";
export { extractLinks } from "./links.ts";
export type { Link, MailContent } from "./types.ts";
