/**
 * The one security-headers middleware (src/http/security_headers.ts): `nosniff`
 * on every response, `no-store` exactly on the prefixes it is given, matched
 * as Hono matches `<prefix>/*` (the prefix itself, or a path below it, never a
 * longer name), on answers, 404s and errors alike.
 */
import assert from "node:assert/strict";
import { Hono } from "hono";
import { securityHeaders } from "../../src/http/security_headers.ts";

function app() {
  const app = new Hono();
  app.use("*", securityHeaders(["/api", "/admin"]));
  app.get("/api/ok", (c) => c.json({ ok: true }));
  app.get("/api/boom", () => {
    throw new Error("boom");
  });
  app.get("/apix", (c) => c.text("not the API"));
  app.get("/", (c) => c.text("home"));
  app.onError((_err, c) => c.json({ error: "x" }, 500));
  return app;
}

Deno.test("no-store under the prefixes only, nosniff everywhere, errors and 404s included", async () => {
  const cases: Array<[string, number, boolean]> = [
    ["/api", 404, true],
    ["/api/", 404, true],
    ["/api/ok", 200, true],
    ["/api/boom", 500, true],
    ["/api/nope/deeper", 404, true],
    ["/admin/accounts", 404, true],
    ["/apix", 200, false],
    ["/administrator", 404, false],
    ["/", 200, false],
    ["/x/api", 404, false],
  ];
  const a = app();
  for (const [path, status, noStore] of cases) {
    const res = await a.request(path);
    await res.body?.cancel();
    assert.equal(res.status, status, path);
    assert.equal(res.headers.get("x-content-type-options"), "nosniff", path);
    assert.equal(res.headers.get("cache-control"), noStore ? "no-store" : null, path);
  }
});
