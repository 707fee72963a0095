/** HTTP/1.1 framing rules of the webhook client (`src/deliveries/http1.ts`), each on its own. */
import assert from "node:assert/strict";
import { framing, parseHead, ProtocolError, requestBytes, ResponseReader } from "../../src/deliveries/http1.ts";

const head = (status: number, headers: Record<string, string> = {}) => ({
  status,
  headers: new Map(Object.entries(headers)),
});

Deno.test("a body is framed by Transfer-Encoding, then Content-Length, else by the connection's end", () => {
  assert.deepEqual(framing(head(204, { "content-length": "5" })), { kind: "none" });
  assert.deepEqual(framing(head(304)), { kind: "none" });
  assert.deepEqual(framing(head(200, { "transfer-encoding": "gzip, chunked", "content-length": "5" })), {
    kind: "chunked",
  });
  assert.deepEqual(framing(head(200, { "transfer-encoding": "gzip" })), { kind: "close" });
  assert.deepEqual(framing(head(200, { "content-length": "5, 5" })), { kind: "length", length: 5 });
  assert.deepEqual(framing(head(200)), { kind: "close" });
  for (const bad of ["5, 6", "-1", "1e3", ""]) {
    assert.throws(() => framing(head(200, { "content-length": bad })), ProtocolError, bad);
  }
});

Deno.test("a head's header names are folded to lower case and repeated ones joined; bad lines are refused", () => {
  const h = parseHead("HTTP/1.1 503 Service Unavailable\r\nRetry-After: 5\r\nX-A: 1\r\nx-a: 2");
  assert.equal(h.status, 503);
  assert.equal(h.headers.get("retry-after"), "5");
  assert.equal(h.headers.get("x-a"), "1, 2");
  assert.equal(parseHead("HTTP/1.0 200").status, 200);
  assert.throws(() => parseHead("HTTP/2 200 OK"), ProtocolError);
  assert.throws(() => parseHead("HTTP/1.1 200 OK\r\n folded"), ProtocolError);
  assert.throws(() => parseHead("HTTP/1.1 200 OK\r\nno colon"), ProtocolError);
});

Deno.test("a request: Host with the port, the path and query as parsed, the caller's framing headers dropped", () => {
  const bytes = requestBytes(new URL("https://Example.COM:8443/a%20b?x=1"), {
    "X-Id": "1",
    "content-length": "9",
    "Transfer-Encoding": "chunked",
  }, new TextEncoder().encode("é"));
  assert.equal(
    new TextDecoder().decode(bytes),
    "POST /a%20b?x=1 HTTP/1.1\r\nHost: example.com:8443\r\nX-Id: 1\r\nContent-Length: 2\r\n\r\né",
  );
  assert.throws(() => requestBytes(new URL("https://a.test/"), { "x": "a\nb" }, new Uint8Array()), /x/);
  assert.throws(() => requestBytes(new URL("https://a.test/"), { "x": "é" }, new Uint8Array()), /x/);
  assert.throws(() => requestBytes(new URL("https://a.test/"), { "x:y": "1" }, new Uint8Array()), /name/);
});

/** A reader over `chunks`, delivered one read each. */
function readerOf(...chunks: string[]): ResponseReader {
  const bytes = chunks.map((c) => new TextEncoder().encode(c));
  return new ResponseReader((into) => {
    const next = bytes.shift();
    if (next === undefined) return Promise.resolve(null);
    into.set(next.subarray(0, into.length));
    if (next.length > into.length) bytes.unshift(next.subarray(into.length));
    return Promise.resolve(Math.min(next.length, into.length));
  });
}

Deno.test("a response split anywhere across reads is read the same, and the next one follows on the connection", async () => {
  const whole =
    "HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nabcHTTP/1.1 201 Created\r\nTransfer-Encoding: chunked\r\n\r\n" +
    "2\r\nde\r\n0\r\n\r\n";
  for (let cut = 1; cut < whole.length; cut += 7) {
    const reader = readerOf(whole.slice(0, cut), whole.slice(cut));
    const first = (await reader.head())!;
    assert.deepEqual(new TextDecoder().decode((await reader.body(framing(first), 100)).bytes), "abc");
    const second = (await reader.head())!;
    assert.equal(second.status, 201);
    assert.deepEqual(await reader.body(framing(second), 100), {
      bytes: new TextEncoder().encode("de"),
      complete: true,
    });
    assert.equal(reader.leftover, false);
  }
});

Deno.test("a body longer than the limit gives its start and is not complete; a head too large is refused", async () => {
  const long = readerOf("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n0123456789");
  const cut = await long.body(framing((await long.head())!), 4);
  assert.deepEqual([new TextDecoder().decode(cut.bytes), cut.complete], ["0123", false]);
  const chunked = readerOf("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n6\r\nabcdef\r\n0\r\n\r\n");
  const part = await chunked.body(framing((await chunked.head())!), 4);
  assert.deepEqual([new TextDecoder().decode(part.bytes), part.complete], ["abcd", false]);
  const huge = readerOf(`HTTP/1.1 200 OK\r\nX: ${"a".repeat(70_000)}\r\n\r\n`);
  await assert.rejects(() => huge.head(), /too large/);
});
