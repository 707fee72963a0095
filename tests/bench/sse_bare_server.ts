/**
 * The physical limit for the event stream benchmark: a bare Deno.serve that
 * holds Server-Sent Events responses open and, on `POST /fire`, enqueues one
 * frame (encoded once, the size of an `inbox.created` frame) into every one of
 * them, with no database, no authentication and no framework. What is left is
 * Deno's HTTP server writing 1,000 chunked responses.
 *
 *   deno run -A tests/bench/sse_bare_server.ts <port>
 */
const [port] = Deno.args;
const streams = new Set<ReadableStreamDefaultController<Uint8Array>>();
const encoder = new TextEncoder();
const padding = "x".repeat(200);

Deno.serve({ hostname: "127.0.0.1", port: Number(port), onListen: () => console.log("ready") }, (req) => {
  const path = new URL(req.url).pathname;
  if (path === "/count") return Response.json({ streams: streams.size });
  if (path === "/fire") {
    const frame = encoder.encode(
      `event: inbox.created\ndata: {"createdAt":"${new Date().toISOString()}","data":"${padding}"}\nid: 1\n\n`,
    );
    for (const controller of streams) controller.enqueue(frame);
    return new Response(null, { status: 204 });
  }
  let self: ReadableStreamDefaultController<Uint8Array>;
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      self = controller;
      streams.add(controller);
    },
    cancel() {
      streams.delete(self);
    },
  }, new CountQueuingStrategy({ highWaterMark: 64 }));
  return new Response(body, { headers: { "content-type": "text/event-stream", "cache-control": "no-cache" } });
});
