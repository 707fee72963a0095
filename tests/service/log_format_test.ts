/**
 * LOG_FORMAT as a user meets it, on the real service process: `json` writes
 * one JSON object per line (what a log collector reads, and the default when
 * stdout is not a terminal, as here), `pretty` writes lines a person reads:
 * time, level, category, the message with its values in place, and the
 * context the message does not show (the request id of a request's line).
 * Forced here, since a test has no terminal; with no terminal `pretty` has no
 * colours.
 */
import assert from "node:assert/strict";
import { createTestDb } from "../_helpers/db.ts";
import { serviceEnv, startService } from "../_helpers/process.ts";

/** Starts the service with `env`, makes one request with a known request id, stops it; returns its stdout lines. */
async function logLinesOf(env: Record<string, string>): Promise<string[]> {
  const db = await createTestDb();
  try {
    const service = await startService(serviceEnv(db, { LOG_LEVEL: "info", ...env }), { stdout: true });
    const res = await fetch(`${service.url}/healthz`, { headers: { "x-request-id": "log-format-probe" } });
    await res.body?.cancel();
    assert.equal(await service.stop(), 0);
    return (await service.stdout()).split("\n").filter((line) => line !== "");
  } finally {
    await db.close();
  }
}

Deno.test("LOG_FORMAT=json, and LOG_FORMAT unset without a terminal: one JSON object per line", async () => {
  for (const env of [{ LOG_FORMAT: "json" }, {}] as Record<string, string>[]) {
    const lines = await logLinesOf(env);
    const records = lines.map((line) => JSON.parse(line)); // throws on any other line
    const listening = records.find((r) => String(r.properties?.url).startsWith("http://127.0.0.1:"));
    assert.ok(listening, lines.join("\n"));
    assert.equal(listening.level, "INFO");
    assert.equal(listening.logger, "inbox.main");
    assert.match(listening.message, /^Listening on /);
    const request = records.find((r) => r.properties?.requestId === "log-format-probe");
    assert.ok(request, "the request's line carries its id");
  }
});

Deno.test("LOG_FORMAT=pretty: readable lines with the time, the level, the category, the message and the request id", async () => {
  const lines = await logLinesOf({ LOG_FORMAT: "Pretty" });
  assert.ok(lines.length > 0);
  for (const line of lines) {
    assert.doesNotMatch(line, /^\{/, "not JSON");
    assert.ok(!line.includes("\x1b["), "no colours without a terminal");
    assert.match(line, /^\d\d:\d\d:\d\d\.\d{3} (TRC|DBG|INF|WRN|ERR|FTL) inbox·\w+: \S/, line);
  }
  assert.ok(
    lines.some((l) => /^\S+ INF inbox·main: Listening on http:\/\/127\.0\.0\.1:\d+ \(postgres database\)/.test(l)),
    lines.join("\n"),
  );
  assert.ok(
    lines.some((l) => /^\S+ INF inbox·http: GET \/healthz 200 \d+ms requestId=log-format-probe$/.test(l)),
    lines.join("\n"),
  );
});
