/** Service endpoints: the home redirect, health, readiness, the document, the reference page, metrics, 404s. */
import assert from "node:assert/strict";
import postgres from "postgres";
import { parse } from "yaml";
import { createTestDb } from "../_helpers/db.ts";
import { startApp } from "../_helpers/app.ts";
import type { Sql } from "../../src/db/client.ts";
import { HOME_PATH } from "../../src/service/routes.ts";

Deno.test("service endpoints", async (t) => {
  const db = await createTestDb();
  const app = await startApp(db.sql);
  try {
    await t.step("healthz and readyz answer 200 while the database answers", async () => {
      for (const path of ["/healthz", "/readyz"]) {
        const res = await app.request(path);
        assert.equal(res.status, 200);
        assert.deepEqual(await res.json(), { status: "ok" });
      }
    });

    await t.step("openapi.yaml is served verbatim and openapi.json is the same document", async () => {
      const yamlText = await (await app.request("/openapi.yaml")).text();
      assert.equal(yamlText, await Deno.readTextFile(new URL("../../openapi.yaml", import.meta.url)));
      const json = await (await app.request("/openapi.json")).json();
      assert.deepEqual(json, parse(yamlText));
      assert.match(json.openapi, /^3\.1\./);
    });

    await t.step(
      "GET / redirects to HOME_PATH, the web UI, which sends a visitor without a session to sign in",
      async () => {
        assert.equal(HOME_PATH, "/ui");
        for (const method of ["GET", "HEAD"]) {
          const res = await app.request("/", { method, redirect: "manual" });
          await res.body?.cancel();
          assert.equal(res.status, 302, method);
          assert.equal(res.headers.get("location"), HOME_PATH);
        }
        const followed = await app.request("/");
        assert.equal(followed.status, 200);
        assert.equal(new URL(followed.url).pathname, "/ui/login");
        assert.match(await followed.text(), /<html/i);
      },
    );

    await t.step("/docs loads the reference bundle from the service itself, not a CDN", async () => {
      const html = await (await app.request("/docs")).text();
      assert.match(html, /src="\/docs\/scalar\.js"/);
      assert.match(html, /\/openapi\.json/);
      assert.doesNotMatch(html, /https?:\/\/(cdn|unpkg|fonts)\./);
      const js = await app.request("/docs/scalar.js");
      assert.equal(js.status, 200);
      assert.match(js.headers.get("content-type") ?? "", /javascript/);
      assert.ok((await js.arrayBuffer()).byteLength > 100_000);
    });

    await t.step("metrics are Prometheus text with request counts by route pattern", async () => {
      await (await app.request("/api/api-keys/key_123")).body?.cancel();
      const text = await (await app.request("/metrics")).text();
      assert.match(text, /# TYPE http_requests_total counter/);
      assert.match(text, /http_requests_total\{method="GET",route="\/healthz",status="200"\} \d+/);
      assert.doesNotMatch(text, /key_123/, "ids stay out of labels");
      assert.match(text, /http_request_duration_seconds_bucket/);
    });

    await t.step("unknown paths are 404 with the error body; request ids are echoed", async () => {
      const res = await app.request("/nope", { headers: { "x-request-id": "abc-123" } });
      assert.equal(res.status, 404);
      assert.deepEqual(await res.json(), { success: false, error: "Not found", code: "NOT_FOUND" });
      assert.equal(res.headers.get("x-request-id"), "abc-123");
      const generated = await app.request("/healthz", { headers: { "x-request-id": "bad id with spaces" } });
      assert.match(generated.headers.get("x-request-id") ?? "", /^[0-9a-f-]{36}$/);
      await generated.body?.cancel();
    });
  } finally {
    await app.close();
    await db.close();
  }
});

Deno.test("readyz answers 503 when the database does not answer", async () => {
  // A port where nothing listens: connecting fails fast.
  const dead = postgres("postgres://postgres@127.0.0.1:1/none", { max: 1, connect_timeout: 1 }) as unknown as Sql;
  const app = await startApp(dead);
  try {
    const res = await app.request("/readyz");
    assert.equal(res.status, 503);
    assert.deepEqual(await res.json(), { status: "unavailable" });
    const health = await app.request("/healthz");
    assert.equal(health.status, 200, "the process itself is alive");
    await health.body?.cancel();
  } finally {
    await app.close();
    await dead.end();
  }
});
