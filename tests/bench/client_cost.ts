/**
 * What the delivery client costs the process that sends, against plain
 * `fetch`, side by side in one run:
 *
 *   deno run -A --lock=deno.dev.lock tests/bench/client_cost.ts [rounds]
 *
 * Both POST the same signed-size body with the same headers to
 * `receiver_server.ts` (its own process, HTTPS with the test CA), 32 at a
 * time, 20,000 requests a round each, alternately. Printed per round:
 * requests/s and the sending process's CPU time (/proc, all threads) per
 * request.
 */
import { createWebhookHttpClient } from "../../src/deliveries/http_client.ts";
import { freePort } from "../_helpers/ports.ts";
import { spawnReady } from "./trees.ts";

const rounds = Number(Deno.args[0] ?? 3);
const REQUESTS = 20_000;
const CONCURRENCY = 32;
const CA = await Deno.readTextFile(new URL("../_helpers/certs/ca.pem", import.meta.url));
const port = freePort();
const control = freePort();
const receiver = await spawnReady(["run", "-A", "tests/bench/receiver_server.ts", String(port), String(control)]);
const url = `https://localhost:${port}/plain`;
const body = JSON.stringify({ type: "inbox.created", data: { inboxId: "inb_x", padding: "y".repeat(200) } });
const headers = {
  "Content-Type": "application/json",
  "X-Webhook-ID": "whk_bench",
  "webhook-id": "evt_bench",
  "webhook-timestamp": "1700000000",
  "webhook-signature": `v1,${"a".repeat(44)}`,
};
const plain = Deno.createHttpClient({ caCerts: [CA], http2: false });
// localhost trusted by name, as the service runs in the benches (WEBHOOK_TRUSTED_HOSTS): a new connection still
// resolves the name and connects to the address it gets.
const webhook = createWebhookHttpClient(
  { resolver: () => Promise.resolve(["127.0.0.1"]), trustedHosts: new Set(["localhost"]) },
  CA,
);

const kinds: Record<string, () => Promise<void>> = {
  "plain fetch": async () => {
    const res = await fetch(url, { method: "POST", body, headers, client: plain });
    await res.text();
    if (res.status !== 200) throw new Error(`status ${res.status}`);
  },
  "delivery client": async () => {
    const out = await webhook.send({ url, headers, body, timeoutMs: 10_000 });
    if (out.kind !== "response" || out.status !== 200) throw new Error(JSON.stringify(out));
  },
};

function cpuSeconds(): number {
  const fields = Deno.readTextFileSync("/proc/self/stat").split(") ")[1]!.split(" ");
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

async function run(kind: string, total: number): Promise<{ rate: number; cpuUs: number }> {
  let next = 0;
  const [t0, c0] = [performance.now(), cpuSeconds()];
  await Promise.all(Array.from({ length: CONCURRENCY }, async () => {
    while (next++ < total) await kinds[kind]!();
  }));
  const seconds = (performance.now() - t0) / 1000;
  return { rate: Math.round(total / seconds), cpuUs: Math.round(((cpuSeconds() - c0) / total) * 1e6) };
}

try {
  for (const kind of Object.keys(kinds)) await run(kind, 2_000); // warm-up: connections, JIT
  for (let round = 0; round < rounds; round++) {
    const order = round % 2 === 0 ? Object.keys(kinds) : Object.keys(kinds).reverse();
    for (const kind of order) {
      const r = await run(kind, REQUESTS);
      console.log(`round ${round} ${kind.padEnd(15)} ${r.rate} requests/s, ${r.cpuUs} us CPU a request`);
    }
  }
} finally {
  await webhook.close();
  plain.close();
  receiver.kill("SIGKILL");
  await receiver.status;
}
