/** A small Server-Sent Events reader for tests: frames and comments as they arrive over a real HTTP response. */

/** One frame (`id`, `event`, `data`) or comment (`: keep-alive`). */
export type SseItem = { kind: "frame"; id: string | undefined; event: string | undefined; data: string } | {
  kind: "comment";
  text: string;
};

/** An open stream: what arrived so far, and a way to wait for more. */
export interface SseStream {
  readonly items: SseItem[];
  /** The frames that arrived so far. */
  frames(): Extract<SseItem, { kind: "frame" }>[];
  /** Resolves once `n` frames arrived; rejects after `timeoutMs`. */
  waitForFrames(n: number, timeoutMs?: number): Promise<void>;
  /** Resolves once a comment arrived; rejects after `timeoutMs`. */
  waitForComment(timeoutMs?: number): Promise<void>;
  /** Drops the connection. */
  close(): void;
  /** Resolves when the response body ended (the server closed or `close` was called). */
  readonly ended: Promise<void>;
}

/** Opens `url` with `headers` and reads it as Server-Sent Events; rejects unless the answer is a 200 event stream. */
export async function openSse(url: string, headers: Record<string, string> = {}): Promise<SseStream> {
  const controller = new AbortController();
  const res = await fetch(url, { headers, signal: controller.signal });
  if (res.status !== 200 || !res.headers.get("content-type")?.startsWith("text/event-stream")) {
    throw new Error(`not an event stream: ${res.status} ${await res.text()}`);
  }
  const items: SseItem[] = [];
  let notify: () => void = () => {};
  const ended = (async () => {
    const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
    let buffer = "";
    try {
      while (true) {
        const { value, done } = await reader.read();
        if (done) break;
        buffer += value;
        let at: number;
        while ((at = buffer.indexOf("\n\n")) >= 0) {
          const block = buffer.slice(0, at);
          buffer = buffer.slice(at + 2);
          const lines = block.split("\n");
          if (lines.every((l) => l.startsWith(":"))) {
            items.push({ kind: "comment", text: lines.map((l) => l.slice(1).trim()).join("\n") });
          } else {
            const field = (name: string) =>
              lines.filter((l) => l.startsWith(`${name}:`)).map((l) => l.slice(name.length + 1).replace(/^ /, ""));
            items.push({ kind: "frame", id: field("id")[0], event: field("event")[0], data: field("data").join("\n") });
          }
          notify();
        }
      }
    } catch {
      // Aborted by close().
    }
    notify();
  })();
  const until = (ok: () => boolean, timeoutMs: number, what: string) =>
    new Promise<void>((resolve, reject) => {
      if (ok()) return resolve();
      const timer = setTimeout(
        () => reject(new Error(`${what} within ${timeoutMs} ms (got ${items.length} items)`)),
        timeoutMs,
      );
      const previous = notify;
      notify = () => {
        previous();
        if (ok()) {
          clearTimeout(timer);
          resolve();
        }
      };
    });
  const frames = () => items.filter((i): i is Extract<SseItem, { kind: "frame" }> => i.kind === "frame");
  return {
    items,
    frames,
    waitForFrames: (n, timeoutMs = 5_000) => until(() => frames().length >= n, timeoutMs, `no ${n} frames`),
    waitForComment: (timeoutMs = 5_000) =>
      until(() => items.some((i) => i.kind === "comment"), timeoutMs, "no comment"),
    close: () => controller.abort(),
    ended,
  };
}
