/**
 * HTTP/1.1 as a webhook exchange needs it (RFC 9112): one request's bytes,
 * and a response read from a connection (its head, then its body as the head
 * frames it: by length, in chunks, or until the receiver closes). Pure but
 * for the reads it is given, so that every framing rule has a direct test.
 *
 * Why not `fetch`: `http_client.ts` says.
 */

const encoder = new TextEncoder();
const latin1 = new TextDecoder("latin1");

/** Largest response head read (status line and headers); a larger one is refused. */
export const MAX_HEAD_BYTES = 64 * 1024;
/** Longest chunk-size or trailer line. */
const MAX_LINE_BYTES = 4 * 1024;

/** A header name: an RFC 9110 token. */
const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
/** A header value: visible ASCII, spaces and tabs (no CR or LF that would end it early, nothing outside ASCII). */
const UNSAFE_VALUE = /[^\t\x20-\x7e]/;
/** Headers this module writes itself; the caller's are ignored. */
const OWN_HEADERS = new Set(["host", "content-length", "transfer-encoding", "connection"]);

/** A response the receiver sent that HTTP/1.1 does not allow (the connection is not used again). */
export class ProtocolError extends Error {}

/**
 * The bytes of a POST of `body` to `url` with `headers`: request line, Host,
 * the caller's headers, Content-Length, then the body. Throws on a header
 * name or value that would break the framing.
 */
export function requestBytes(url: URL, headers: Record<string, string>, body: Uint8Array): Uint8Array {
  let head = `POST ${url.pathname}${url.search} HTTP/1.1\r\nHost: ${url.host}\r\n`;
  for (const [name, value] of Object.entries(headers)) {
    if (!TOKEN.test(name)) throw new Error(`Invalid header name: ${JSON.stringify(name)}`);
    if (UNSAFE_VALUE.test(value)) throw new Error(`Invalid value of header ${name}`);
    if (OWN_HEADERS.has(name.toLowerCase())) continue;
    head += `${name}: ${value}\r\n`;
  }
  head += `Content-Length: ${body.byteLength}\r\n\r\n`;
  const bytes = new Uint8Array(head.length + body.byteLength);
  encoder.encodeInto(head, bytes);
  bytes.set(body, head.length);
  return bytes;
}

/** A response's status line and headers (names in lower case; repeated ones joined with ", "). */
export interface ResponseHead {
  status: number;
  headers: Map<string, string>;
}

/** Parses a response head (without its blank line). */
export function parseHead(text: string): ResponseHead {
  const lines = text.split("\r\n");
  const status = /^HTTP\/1\.[01] ([1-9]\d\d)(?: .*)?$/.exec(lines[0]!);
  if (!status) throw new ProtocolError(`Invalid status line: ${JSON.stringify(lines[0]!.slice(0, 100))}`);
  const headers = new Map<string, string>();
  for (const line of lines.slice(1)) {
    const colon = line.indexOf(":");
    const name = line.slice(0, colon);
    // A folded line (obs-fold) or one without a name: RFC 9112 lets a client reject the message.
    if (colon <= 0 || !TOKEN.test(name)) throw new ProtocolError("Invalid header line");
    const key = name.toLowerCase();
    const value = line.slice(colon + 1).trim();
    const before = headers.get(key);
    headers.set(key, before === undefined ? value : `${before}, ${value}`);
  }
  return { status: Number(status[1]), headers };
}

/** How a response's body is delimited (RFC 9112, section 6.3). */
export type Framing =
  | { kind: "none" }
  | { kind: "length"; length: number }
  | { kind: "chunked" }
  /** Until the receiver closes the connection. */
  | { kind: "close" };

/** The framing of the body of a response to a POST. */
export function framing(head: ResponseHead): Framing {
  if (head.status < 200 || head.status === 204 || head.status === 304) return { kind: "none" };
  const coding = head.headers.get("transfer-encoding");
  if (coding !== undefined) {
    return coding.split(",").at(-1)!.trim().toLowerCase() === "chunked" ? { kind: "chunked" } : { kind: "close" };
  }
  const length = head.headers.get("content-length");
  if (length === undefined) return { kind: "close" };
  // Repeated (joined with ", "), every value must be the same.
  const values = new Set(length.split(",").map((v) => v.trim()));
  const [only] = values;
  if (values.size !== 1 || !/^\d{1,15}$/.test(only!)) throw new ProtocolError("Invalid Content-Length");
  return { kind: "length", length: Number(only) };
}

/**
 * Buffered reads from one connection. `read` is the connection's (resolves
 * with 0 or more bytes, or null at its end).
 */
export class ResponseReader {
  readonly #read: (into: Uint8Array) => Promise<number | null>;
  #buf = new Uint8Array(16 * 1024);
  #start = 0;
  #end = 0;
  /** Whether any byte arrived since the caller last set this to false (before a request). */
  received = false;

  constructor(read: (into: Uint8Array) => Promise<number | null>) {
    this.#read = read;
  }

  /** Reads more into the buffer; false at the connection's end. */
  async #fill(): Promise<boolean> {
    if (this.#start > 0 && this.#start === this.#end) this.#start = this.#end = 0;
    if (this.#end === this.#buf.length) {
      const grown = new Uint8Array(this.#start > this.#buf.length / 2 ? this.#buf.length : this.#buf.length * 2);
      grown.set(this.#buf.subarray(this.#start, this.#end));
      this.#end -= this.#start;
      this.#start = 0;
      this.#buf = grown;
    }
    const n = await this.#read(this.#buf.subarray(this.#end));
    if (n === null) return false;
    this.#end += n;
    if (n > 0) this.received = true;
    return true;
  }

  /** Bytes up to the next CRLF (`\r\n\r\n` when `blankLine`), consumed with it; null if the connection ends first. */
  async #until(blankLine: boolean, max: number): Promise<string | null> {
    const mark = blankLine ? 4 : 2;
    // Where the search goes on, counted from #start (which a fill may move).
    let scanned = 0;
    while (true) {
      for (let i = this.#start + scanned;; i++) {
        i = this.#buf.indexOf(13, i);
        if (i < 0 || i + mark > this.#end || i - this.#start > max) break;
        if (this.#buf[i + 1] === 10 && (!blankLine || (this.#buf[i + 2] === 13 && this.#buf[i + 3] === 10))) {
          const text = latin1.decode(this.#buf.subarray(this.#start, i));
          this.#start = i + mark;
          return text;
        }
      }
      if (this.#end - this.#start > max) {
        throw new ProtocolError(blankLine ? "Response head too large" : "Line too long");
      }
      scanned = Math.max(0, this.#end - this.#start - mark + 1);
      if (!(await this.#fill())) return null;
    }
  }

  /** The next response head, 1xx interim responses passed over; null when the connection ends before one. */
  async head(): Promise<ResponseHead | null> {
    while (true) {
      const text = await this.#until(true, MAX_HEAD_BYTES);
      if (text === null) return null;
      const head = parseHead(text);
      if (head.status >= 200) return head;
    }
  }

  /** Up to `n` bytes, appended to `into`; false if the connection ends first. */
  async #take(n: number, into: Uint8Array[]): Promise<boolean> {
    while (n > 0) {
      if (this.#start === this.#end && !(await this.#fill())) return false;
      const k = Math.min(n, this.#end - this.#start);
      into.push(this.#buf.slice(this.#start, this.#start + k));
      this.#start += k;
      n -= k;
    }
    return true;
  }

  /**
   * The body as `f` frames it, or its first `limit` bytes when it is longer:
   * `complete` says whether the whole body was read (then, unless it
   * was framed by the connection's end, the connection may carry another
   * request). A body framed by the connection's end is read to it, or to
   * `limit`.
   */
  async body(f: Framing, limit: number): Promise<{ bytes: Uint8Array; complete: boolean }> {
    const parts: Uint8Array[] = [];
    let complete = true;
    switch (f.kind) {
      case "none":
        break;
      case "length":
        if (f.length > limit) {
          complete = false;
          await this.#take(limit, parts);
        } else if (!(await this.#take(f.length, parts))) throw new ProtocolError("Body cut short");
        break;
      case "chunked": {
        let total = 0;
        while (true) {
          const line = await this.#until(false, MAX_LINE_BYTES);
          if (line === null) throw new ProtocolError("Body cut short");
          const size = /^([0-9a-fA-F]{1,8})[ \t]*(?:;.*)?$/.exec(line);
          if (!size) throw new ProtocolError("Invalid chunk size");
          const n = parseInt(size[1]!, 16);
          if (n === 0) {
            // Trailer lines, then the blank line that ends the message.
            while (true) {
              const trailer = await this.#until(false, MAX_LINE_BYTES);
              if (trailer === null) throw new ProtocolError("Body cut short");
              if (trailer === "") break;
            }
            break;
          }
          if (total + n > limit) {
            complete = false;
            await this.#take(limit - total, parts);
            break;
          }
          if (!(await this.#take(n, parts))) throw new ProtocolError("Body cut short");
          total += n;
          if ((await this.#until(false, 2)) !== "") throw new ProtocolError("Invalid chunk end");
        }
        break;
      }
      case "close":
        // Complete when the connection ends before `limit` bytes.
        complete = !(await this.#take(limit, parts));
        break;
    }
    if (parts.length === 1) return { bytes: parts[0]!, complete };
    const bytes = new Uint8Array(parts.reduce((n, p) => n + p.byteLength, 0));
    let at = 0;
    for (const p of parts) {
      bytes.set(p, at);
      at += p.byteLength;
    }
    return { bytes, complete };
  }

  /** Whether bytes beyond the response arrived (a receiver that answered more than once: not reusable). */
  get leftover(): boolean {
    return this.#end > this.#start;
  }
}
