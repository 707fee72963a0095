/**
 * CPU per request of `GET /api/user-webhooks` through the app in this
 * process (`app.fetch`, no HTTP), against a bare handler running the same
 * list query with postgres.js: the framework path's own cost, without the
 * HTTP server and with no other process on the measured side. 20,000
 * requests at 32 concurrent per run, five runs after a warm-up; the CPU time
 * is this process's (all threads, `process.cpuUsage`), logs at `warning` as
 * the bench runs the service.
 *
 *   deno run -A --lock=deno.dev.lock tests/bench/api_in_process.ts [app|bare]
 */
import process from "node:process";
import { createTestDb } from "../_helpers/db.ts";
import { startApp, testConfig } from "../_helpers/app.ts";
import { benchAccount } from "./api_bench.ts";
import { bareList } from "./bare_server.ts";
import { staticResolver } from "../_helpers/resolver.ts";
import { createApp } from "../../src/app.ts";
import { setupLogging } from "../../src/shared/log.ts";

const RUNS = 5;
const REQUESTS = 20_000;
const CONCURRENCY = 32;

const which = Deno.args[0] ?? "app";
const db = await createTestDb();
const started = await startApp(db.sql, {
  config: testConfig({ WEBHOOK_TRUSTED_HOSTS: "localhost" }),
  resolver: staticResolver({ localhost: ["127.0.0.1"] }),
});
try {
  const { id, key } = await benchAccount(started);
  // The test harness keeps every record from debug up; the service under the bench writes warnings and above.
  await setupLogging("warning", { sink: () => {} });
  const bare = bareList(started.deps.sql, id);
  const handler = which === "bare" ? bare : createApp(started.deps).fetch;
  const headers = { authorization: `Bearer ${key}` };
  const load = async (requests: number) => {
    let left = requests;
    await Promise.all(Array.from({ length: CONCURRENCY }, async () => {
      while (left-- > 0) {
        const res = await handler(new Request("http://bench/api/user-webhooks", { headers }));
        if (res.status !== 200) throw new Error(`status ${res.status}`);
        await res.text();
      }
    }));
  };
  await load(REQUESTS / 4); // warm-up
  const perRequest: number[] = [];
  for (let run = 0; run < RUNS; run++) {
    const before = process.cpuUsage();
    await load(REQUESTS);
    const used = process.cpuUsage(before);
    perRequest.push((used.user + used.system) / REQUESTS);
  }
  perRequest.sort((a, b) => a - b);
  console.log(
    `${which}: CPU per request ${perRequest.map((x) => x.toFixed(1)).join(", ")} us; median ${
      perRequest[Math.floor(RUNS / 2)]!.toFixed(1)
    } us`,
  );
} finally {
  await started.close();
  await db.close();
}
