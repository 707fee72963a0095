/**
 * Raw HTTP/1.1 over TCP, for requests `fetch` will not send: invented methods
 * such as `XYZ123 /` (fetch refuses some names and normalises others).
 */

/** What came back: the status code and the response head and body as text. */
export interface RawResponse {
  status: number;
  text: string;
}

const decoder = new TextDecoder();

/** Sends one request on a new connection (`Connection: close`) and reads the answer to its end. */
export async function rawRequest(
  baseUrl: string,
  method: string,
  path: string,
  headers: Record<string, string> = {},
  body = "",
): Promise<RawResponse> {
  const url = new URL(baseUrl);
  const conn = await Deno.connect({ hostname: url.hostname, port: Number(url.port) });
  try {
    const lines = [`${method} ${path} HTTP/1.1`, `Host: ${url.host}`, "Connection: close"];
    for (const [name, value] of Object.entries(headers)) lines.push(`${name}: ${value}`);
    if (body !== "") lines.push(`Content-Length: ${new TextEncoder().encode(body).length}`);
    await writeAll(conn, new TextEncoder().encode(`${lines.join("\r\n")}\r\n\r\n${body}`));
    const chunks: Uint8Array[] = [];
    const buf = new Uint8Array(16 * 1024);
    for (;;) {
      const n = await conn.read(buf);
      if (n === null) break;
      chunks.push(buf.slice(0, n));
    }
    const text = decoder.decode(concat(chunks));
    const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(text)?.[1] ?? NaN);
    return { status, text };
  } finally {
    try {
      conn.close();
    } catch {
      // Already closed by the server.
    }
  }
}

/** Runs `count` requests, `concurrency` at a time; `make(i)` gives the i-th method and path. */
export async function rawBurst(
  baseUrl: string,
  count: number,
  concurrency: number,
  make: (i: number) => { method: string; path: string },
): Promise<Map<number, number>> {
  const statuses = new Map<number, number>();
  let next = 0;
  const worker = async () => {
    while (next < count) {
      const { method, path } = make(next++);
      const { status } = await rawRequest(baseUrl, method, path);
      statuses.set(status, (statuses.get(status) ?? 0) + 1);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  return statuses;
}

async function writeAll(conn: Deno.Conn, data: Uint8Array): Promise<void> {
  let written = 0;
  while (written < data.length) written += await conn.write(data.subarray(written));
}

function concat(chunks: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(chunks.reduce((n, c) => n + c.length, 0));
  let at = 0;
  for (const c of chunks) {
    out.set(c, at);
    at += c.length;
  }
  return out;
}
