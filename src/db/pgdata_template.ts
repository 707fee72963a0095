/**
 * The embedded database's first start, without initdb: PGlite's own first
 * start runs initdb in a second PostgreSQL instance of the same process,
 * copies that instance's whole 128 MiB heap to restore it between initdb's
 * steps, then dumps the result as a tar and loads it into the first one. That
 * took the process to a peak of 816-1,025 MiB RSS, and the garbage it left
 * kept the idle service at 425-1,011 MiB 30 s after it answered
 * (tests/bench/README.md, embedded), until a garbage collection that an idle
 * process may not run for minutes. The directory initdb makes is the same on
 * every machine, so it is made once (scripts/pgdata_template.ts) and shipped
 * as vendor/pglite/pgdata.tar.gz (4.4 MB); a first start unpacks it, streamed,
 * into DATA_DIR and then opens it as any later start does.
 *
 * The reader below is written here rather than taken from npm's `tar`
 * (7.5.23): unpacking this template in a bare process took 550-670 ms and
 * left 115-119 MiB RSS with it, 259 ms and 71 MiB with this reader, and the
 * first start's memory is what this module is for. It reads only what the
 * script writes: ustar regular files and directories.
 *
 * The template is used only with the PGlite release that made it
 * (vendor/pglite/pglite-version); with another, the start falls back to
 * PGlite's initdb and says so.
 */
import { dirname, join } from "node:path";

/** The template: a PGlite data directory, cleanly shut down, as ustar in gzip. */
export const TEMPLATE_URL = new URL("../../vendor/pglite/pgdata.tar.gz", import.meta.url);
/** The @electric-sql/pglite version that made the template. */
export const VERSION_URL = new URL("../../vendor/pglite/pglite-version", import.meta.url);

/** The installed @electric-sql/pglite version, read from where the import map resolves it. */
export const PGLITE_VERSION: string | undefined = /@electric-sql[+/]pglite@(\d+\.\d+\.\d+[^/_]*)/.exec(
  import.meta.resolve("@electric-sql/pglite"),
)?.[1];

/** Why the template cannot make `pgdata`, or undefined when it can. */
export async function templateRefusal(): Promise<string | undefined> {
  const made = (await Deno.readTextFile(VERSION_URL).catch(() => "")).trim();
  if (made === "") return "there is no template";
  if (made !== PGLITE_VERSION) return `the template is of PGlite ${made}, not ${PGLITE_VERSION ?? "(unknown)"}`;
  return undefined;
}

const BLOCK = 512;

/** A NUL-terminated ASCII field of a tar header. */
function field(header: Uint8Array, start: number, length: number): string {
  const bytes = header.subarray(start, start + length);
  const end = bytes.indexOf(0);
  return new TextDecoder().decode(end < 0 ? bytes : bytes.subarray(0, end));
}

/** Reads exactly n bytes from a stream of chunks, keeping what follows for the next read. */
class Blocks {
  #pending: Uint8Array[] = [];
  #buffered = 0;
  constructor(private readonly reader: ReadableStreamDefaultReader<Uint8Array>) {}

  /** Up to `max` bytes (at least one), or undefined at the end of the stream. */
  async some(max: number): Promise<Uint8Array | undefined> {
    if (this.#buffered === 0) {
      const { value, done } = await this.reader.read();
      if (done) return undefined;
      this.#pending.push(value);
      this.#buffered += value.byteLength;
    }
    const first = this.#pending[0]!;
    const out = first.subarray(0, Math.min(max, first.byteLength));
    if (out.byteLength === first.byteLength) this.#pending.shift();
    else this.#pending[0] = first.subarray(out.byteLength);
    this.#buffered -= out.byteLength;
    return out;
  }

  /** Exactly n bytes; the stream ending first is an error. */
  async exactly(n: number): Promise<Uint8Array> {
    const out = new Uint8Array(n);
    for (let at = 0; at < n;) {
      const part = await this.some(n - at);
      if (!part) throw new Error("the template ends in the middle of an entry");
      out.set(part, at);
      at += part.byteLength;
    }
    return out;
  }
}

/**
 * Unpacks the template into `pgdata`, which must not exist: into a sibling
 * directory first, renamed when complete, so that a start cut short leaves
 * no half a database for the next one to open.
 */
export async function unpackTemplate(pgdata: string): Promise<void> {
  const partial = `${pgdata}.partial`;
  await Deno.remove(partial, { recursive: true }).catch((err) => {
    if (!(err instanceof Deno.errors.NotFound)) throw err;
  });
  await Deno.mkdir(partial, { mode: 0o700 });
  const file = await Deno.open(TEMPLATE_URL);
  const reader = file.readable.pipeThrough(new DecompressionStream("gzip")).getReader();
  const blocks = new Blocks(reader);
  try {
    for (;;) {
      const header = await blocks.exactly(BLOCK);
      if (header.every((b) => b === 0)) break; // The end-of-archive blocks.
      const name = [field(header, 345, 155), field(header, 0, 100)].filter((s) => s !== "").join("/")
        .replace(/^\.\/?/, "");
      const size = parseInt(field(header, 124, 12).trim() || "0", 8);
      const type = String.fromCharCode(header[156]!);
      if (name.split("/").includes("..")) throw new Error(`the template names a path outside it: ${name}`);
      const path = join(partial, name);
      if (type === "5") {
        if (name !== "") await Deno.mkdir(path, { recursive: true, mode: 0o700 });
      } else if (type === "0" || type === "\0") {
        await Deno.mkdir(dirname(path), { recursive: true, mode: 0o700 });
        // Streamed in pieces: the largest file is a 16 MiB WAL segment.
        const out = await Deno.open(path, { write: true, createNew: true, mode: 0o600 });
        try {
          for (let left = size; left > 0;) {
            const part = await blocks.some(left);
            if (!part) throw new Error(`the template ends in the middle of ${name}`);
            for (let written = 0; written < part.byteLength;) {
              written += await out.write(part.subarray(written));
            }
            left -= part.byteLength;
          }
        } finally {
          out.close();
        }
      } else {
        throw new Error(`the template has an entry of tar type ${JSON.stringify(type)}: ${name}`);
      }
      const padding = (BLOCK - (size % BLOCK)) % BLOCK;
      if (type !== "5" && padding > 0) await blocks.exactly(padding);
    }
  } finally {
    // Closes the file too (the stream owns it), also when the archive ended before it.
    await reader.cancel().catch(() => {});
  }
  await Deno.rename(partial, pgdata);
}
