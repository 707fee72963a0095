/**
 * The types shared by the code and link finders and their callers.
 *
 * @module
 */

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
