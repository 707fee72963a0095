/**
 * A standalone HTTPS webhook receiver for benchmarks, in its own process so
 * it does not share a core's event loop with what is measured.
 *
 *   deno run -A tests/bench/receiver_server.ts <https port> <control port>
 *
 * HTTPS: answers every request 200 (after `delayMs`, settable), counts it, and
 * when the body is an event records now - createdAt (commit-to-receipt
 * latency). Control (plain HTTP on 127.0.0.1): GET /stats, GET /count (the count
 * alone, for polling without serialising every latency), POST /reset?delayMs=N;
 * `?path=/x` counts, or gives the latencies of, the requests to that path only.
 */
const [httpsPort, controlPort] = Deno.args.map(Number);
const certs = new URL("../_helpers/certs/", import.meta.url);
let count = 0;
let delayMs = 0;
let latencies: number[] = [];
/** Per path: how many requests, and the latencies of those that carried an event. */
let byPath = new Map<string, { count: number; latencies: number[] }>();

Deno.serve({
  hostname: "127.0.0.1",
  port: httpsPort!,
  cert: await Deno.readTextFile(new URL("receiver.pem", certs)),
  key: await Deno.readTextFile(new URL("receiver.key", certs)),
  onListen: () => {},
}, async (req) => {
  const body = await req.text();
  count++;
  const path = new URL(req.url).pathname;
  const mine = byPath.get(path) ?? { count: 0, latencies: [] };
  byPath.set(path, mine);
  mine.count++;
  const createdAt = /"createdAt":"([^"]+)"/.exec(body)?.[1];
  if (createdAt) {
    latencies.push(Date.now() - Date.parse(createdAt));
    mine.latencies.push(latencies.at(-1)!);
  }
  if (delayMs > 0) await new Promise((r) => setTimeout(r, delayMs));
  return new Response("ok");
});

Deno.serve({ hostname: "127.0.0.1", port: controlPort!, onListen: () => console.log("ready") }, (req) => {
  const url = new URL(req.url);
  if (url.pathname === "/reset") {
    count = 0;
    latencies = [];
    byPath = new Map();
    delayMs = Number(url.searchParams.get("delayMs") ?? 0);
    return new Response("ok");
  }
  const path = url.searchParams.get("path");
  if (path !== null) {
    const mine = byPath.get(path) ?? { count: 0, latencies: [] };
    return Response.json(url.pathname === "/count" ? { count: mine.count } : mine);
  }
  if (url.pathname === "/count") return Response.json({ count });
  return Response.json({ count, latencies });
});
