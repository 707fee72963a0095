/**
 * The physical limit for the delivery benchmark: plain fetch from one process
 * to the same HTTPS receiver at the same concurrency, HTTP/1.1 as the
 * service's client uses, with a JSON body of the same size.
 *
 *   deno run -A tests/bench/fetch_load.ts <url> <requests> <concurrency> <body bytes>
 * Prints requests per second.
 */
const [url, total, concurrency, bodyBytes] = [Deno.args[0]!, ...Deno.args.slice(1).map(Number)] as [
  string,
  number,
  number,
  number,
];
const client = Deno.createHttpClient({
  caCerts: [await Deno.readTextFile(new URL("../_helpers/certs/ca.pem", import.meta.url))],
  http2: false,
});
const body = JSON.stringify({ pad: "x".repeat(Math.max(0, bodyBytes - 10)) });
let next = 0;
const started = performance.now();
await Promise.all(Array.from({ length: concurrency }, async () => {
  while (next++ < total) {
    const res = await fetch(url, { method: "POST", body, headers: { "content-type": "application/json" }, client });
    await res.arrayBuffer();
  }
}));
console.log(String(Math.round(total / ((performance.now() - started) / 1000))));
client.close();
