/**
 * The request body examples of openapi.yaml are what `/docs` "Test Request"
 * sends as they are, so each must pass the route's own validation. Every JSON
 * request body of an operation has one, and each example is sent over HTTP to
 * the service with a credential the operation accepts: none may be refused as
 * a VALIDATION_ERROR. A body the route must refuse (an array) is sent too, as
 * a control: it is a VALIDATION_ERROR there, so the example was judged by the
 * validator rather than stopped before it. (Each example also validates
 * against its own schema: `deno task lint:spec`, no-invalid-media-type-examples.)
 */
import assert from "node:assert/strict";
import { openApiDocument } from "../../src/service/openapi_document.ts";
import { ADMIN_TOKEN, type ApiRequestInit } from "../_helpers/app.ts";
import { withService } from "../_helpers/harness.ts";

interface MediaType {
  example?: unknown;
  examples?: Record<string, { value: unknown }>;
}

interface Operation {
  operationId: string;
  security?: Record<string, string[]>[];
  requestBody?: { content: Record<string, MediaType> };
}

/** Every operation of `paths` with a JSON request body, and its examples by name. */
function requestExamples(): { method: string; path: string; op: Operation; examples: Map<string, unknown> }[] {
  const paths = openApiDocument.paths as Record<string, Record<string, Operation>>;
  const found = [];
  for (const [path, item] of Object.entries(paths)) {
    for (const [method, op] of Object.entries(item)) {
      const media = op.requestBody?.content["application/json"];
      if (!media) continue;
      const examples = new Map<string, unknown>();
      if ("example" in media) examples.set("example", media.example);
      for (const [name, ex] of Object.entries(media.examples ?? {})) examples.set(name, ex.value);
      found.push({ method: method.toUpperCase(), path, op, examples });
    }
  }
  return found;
}

Deno.test("every request body example in openapi.yaml passes its route's validation", async () => {
  const operations = requestExamples();
  assert.ok(operations.length >= 8, `found only ${operations.length} operations with a JSON body`);
  const missing = operations.filter((o) => o.examples.size === 0).map((o) => o.op.operationId);
  assert.deepEqual(missing, [], "every JSON request body has an example");

  await withService({ user: "business" }, async ({ app, user }) => {
    const credential = (op: Operation): ApiRequestInit => {
      const schemes = (op.security ?? []).flatMap((s) => Object.keys(s));
      if (schemes.includes("adminToken")) return { auth: ADMIN_TOKEN };
      if (schemes.includes("sessionCookie")) return { cookie: user.cookie };
      return {};
    };
    const send = async (method: string, path: string, op: Operation, json: unknown) => {
      // Path parameters name nothing that exists: the body is validated before the handler looks.
      const url = path.replaceAll(/\{[^}]+\}/g, "none");
      const res = await app.request(url, { method, json, ...credential(op) });
      const text = await res.text();
      return { status: res.status, code: res.status >= 400 ? JSON.parse(text).code as string : undefined, text };
    };

    const refused: string[] = [];
    for (const { method, path, op, examples } of operations) {
      const control = await send(method, path, op, []);
      assert.equal(control.code, "VALIDATION_ERROR", `${op.operationId}: an array reaches the validator`);
      for (const [name, example] of examples) {
        const r = await send(method, path, op, example);
        assert.ok(r.status < 500, `${op.operationId} ${name}: ${r.status} ${r.text}`);
        if (r.code === "VALIDATION_ERROR") refused.push(`${op.operationId} (${name}): ${r.text}`);
      }
    }
    assert.deepEqual(refused, [], "examples the service refuses as invalid");
  });
});
