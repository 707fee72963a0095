/**
 * The normaliser must not hide drift: each test changes one thing in a copy
 * of the real `openapi.yaml` and expects the normalised operation to differ,
 * while forms that mean the same (`$ref` or inline, `const` or `enum`) must
 * compare equal.
 */
import assert from "node:assert/strict";
import { parse } from "yaml";
import {
  describeDifferences,
  type HttpMethod,
  listOperations,
  normalizeOperation,
  normalizeSchema,
  type OpenApiDoc,
} from "./normalize.ts";

const original: OpenApiDoc = parse(await Deno.readTextFile(new URL("../../openapi.yaml", import.meta.url)));

// deno-lint-ignore no-explicit-any
type Any = any;

/** A deep copy of the real document, changed by `mutate`. */
function mutated(mutate: (doc: Any) => void): OpenApiDoc {
  const doc = structuredClone(original);
  mutate(doc);
  return doc;
}

/** Asserts the change made by `mutate` shows in the normalised operation. */
function assertDrift(path: string, method: HttpMethod, mutate: (doc: Any) => void): void {
  const before = normalizeOperation(original, path, method);
  const after = normalizeOperation(mutated(mutate), path, method);
  assert.notDeepStrictEqual(after, before);
  assert.notEqual(describeDifferences(after, before).length, 0, "describeDifferences must name the change");
}

/** Asserts the change made by `mutate` does not change the normalised operation. */
function assertSame(path: string, method: HttpMethod, mutate: (doc: Any) => void): void {
  const before = normalizeOperation(original, path, method);
  const after = normalizeOperation(mutated(mutate), path, method);
  assert.deepEqual(after, before, describeDifferences(after, before, ["changed", "original"]).join("\n"));
}

Deno.test("normalize: the same document compares equal to itself", () => {
  assertSame("/api/api-keys", "post", () => {});
});

Deno.test("normalize: every yaml operation normalises without error", () => {
  const ops = listOperations(original);
  assert.ok(ops.length > 0);
  for (const { path, method } of ops) normalizeOperation(original, path, method);
});

Deno.test("normalize: a changed response property type is drift", () => {
  assertDrift("/api/me", "get", (d) => d.components.schemas.Account.properties.createdAt.type = "integer");
});

Deno.test("normalize: a removed required field is drift", () => {
  assertDrift("/api/api-keys", "get", (d) => {
    d.components.schemas.ApiKey.required = d.components.schemas.ApiKey.required.filter((k: string) =>
      k !== "lastUsedAt"
    );
  });
});

Deno.test("normalize: an added response property is drift", () => {
  assertDrift("/api/api-keys", "post", (d) => d.components.schemas.ApiKeyCreated.properties.extra = { type: "string" });
});

Deno.test("normalize: a changed status code is drift", () => {
  assertDrift("/api/me", "get", (d) => {
    const responses = d.paths["/api/me"].get.responses;
    responses["201"] = responses["200"];
    delete responses["200"];
  });
});

Deno.test("normalize: a removed parameter is drift", () => {
  assertDrift("/api/api-keys/{id}", "delete", (d) => d.paths["/api/api-keys/{id}"].delete.parameters = []);
});

Deno.test("normalize: a changed request body maxLength is drift", () => {
  assertDrift("/api/api-keys", "post", (d) => d.components.schemas.ApiKeyCreateRequest.properties.name.maxLength = 101);
});

Deno.test("normalize: a removed response header is drift", () => {
  assertDrift("/api/api-keys", "post", (d) => delete d.paths["/api/api-keys"].post.responses["201"].headers.RateLimit);
});

Deno.test("normalize: a header no longer required is drift", () => {
  assertDrift("/api/api-keys", "post", (d) => d.components.headers.RateLimit.required = false);
});

Deno.test("normalize: a header of another type is drift", () => {
  assertDrift("/api/api-keys", "post", (d) => d.components.headers.RetryAfter.schema.type = "string");
});

Deno.test("normalize: a dropped additionalProperties: false is drift", () => {
  assertDrift("/api/auth/register", "post", (d) => delete d.components.schemas.Credentials.additionalProperties);
});

Deno.test("normalize: a dropped format is drift", () => {
  assertDrift("/api/auth/login", "post", (d) => delete d.components.schemas.Credentials.properties.email.format);
});

Deno.test("normalize: a changed enum is drift", () => {
  assertDrift("/admin/accounts", "post", (d) => d.components.schemas.Plan.enum = ["free", "pro"]);
});

Deno.test("normalize: an optional request body is drift", () => {
  assertDrift("/api/auth/login", "post", (d) => d.paths["/api/auth/login"].post.requestBody.required = false);
});

Deno.test("normalize: another content type is drift", () => {
  assertDrift("/api/me", "get", (d) => {
    const r = d.paths["/api/me"].get.responses["200"];
    r.content = { "text/plain": r.content["application/json"] };
  });
});

Deno.test("normalize: changed security is drift", () => {
  assertDrift("/api/me", "get", (d) => d.paths["/api/me"].get.security = []);
});

Deno.test("normalize: a response schema changed through a referenced response is drift", () => {
  assertDrift("/api/me", "get", (d) => d.components.responses.Unauthorized.content["application/json"].schema = {});
});

Deno.test("normalize: descriptions, examples and extensions are ignored", () => {
  assertSame("/api/api-keys", "post", (d) => {
    const op = d.paths["/api/api-keys"].post;
    op.summary = "other";
    op.description = "other";
    op.responses["201"].description = "other";
    d.components.schemas.ApiKeyCreateRequest.properties.name.description = "other";
    d.components.schemas.ApiKeyCreateRequest.properties.name.example = "ci";
    d.components.schemas.ApiKeyCreateRequest.title = "Title";
    d.components.schemas.ApiKeyCreateRequest["x-internal"] = true;
    d.components.headers.RateLimit.description = "other";
  });
});

Deno.test("normalize: $ref and inline forms compare equal", () => {
  assertSame("/api/api-keys/{id}", "delete", (d) => {
    const op = d.paths["/api/api-keys/{id}"].delete;
    op.parameters = [structuredClone(d.components.parameters.ApiKeyId)];
    op.responses["200"].headers = {
      RateLimit: structuredClone(d.components.headers.RateLimit),
      "RateLimit-Policy": structuredClone(d.components.headers.RateLimitPolicy),
    };
    op.responses["200"].content["application/json"].schema = structuredClone(d.components.schemas.Success);
    op.responses["401"] = structuredClone(d.components.responses.Unauthorized);
  });
  assertSame("/admin/accounts", "post", (d) => {
    // Nested refs too: Plan inside the inlined request schema stays a $ref.
    d.paths["/admin/accounts"].post.requestBody.content["application/json"].schema = structuredClone(
      d.components.schemas.AdminAccountCreateRequest,
    );
  });
});

Deno.test("normalize: const and a one-value enum compare equal", () => {
  assertSame("/api/auth/logout", "post", (d) => {
    d.components.schemas.Success.properties.success = { type: "boolean", const: true };
  });
  assertDrift("/api/auth/logout", "post", (d) => {
    d.components.schemas.Success.properties.success = { type: "boolean", const: false };
  });
});

Deno.test("normalize: order of keys, required and type, and one-element type lists, do not matter", () => {
  assertSame("/api/api-keys", "get", (d) => {
    const s = d.components.schemas.ApiKey;
    s.required = [...s.required].reverse();
    s.properties.lastUsedAt.type = ["null", "string"];
    s.properties.id.type = ["string"];
    d.components.schemas.ApiKey = Object.fromEntries(Object.entries(s).reverse());
  });
});

Deno.test("normalize: $ref with annotation siblings equals the plain $ref", () => {
  assertSame("/api/me", "get", (d) => {
    d.paths["/api/me"].get.responses["200"].content["application/json"].schema = {
      $ref: "#/components/schemas/Account",
      description: "The account",
    };
  });
});

Deno.test("normalize: recursive schemas terminate and compare", () => {
  const doc: OpenApiDoc = {
    components: {
      schemas: {
        Node: {
          type: "object",
          properties: { children: { type: "array", items: { $ref: "#/components/schemas/Node" } } },
        },
      },
    },
  };
  const n = normalizeSchema(doc, { $ref: "#/components/schemas/Node" });
  assert.deepEqual(n, {
    properties: { children: { items: { $cycle: "#/components/schemas/Node" }, type: "array" } },
    type: "object",
  });
});

Deno.test("normalize: properties named like annotations are kept", () => {
  const schema = {
    type: "object",
    properties: { description: { type: "string" }, title: { type: "string" }, "x-id": { type: "string" } },
    required: ["title", "description"],
  };
  assert.deepEqual(normalizeSchema({}, schema), {
    properties: { description: { type: "string" }, title: { type: "string" }, "x-id": { type: "string" } },
    required: ["description", "title"],
    type: "object",
  });
});

Deno.test("normalize: an unresolvable $ref fails loudly", () => {
  assert.throws(() => normalizeSchema({}, { $ref: "#/components/schemas/Missing" }), /unresolvable \$ref/);
});

Deno.test("describeDifferences names the changed path", () => {
  const after = normalizeOperation(
    mutated((d) => d.components.schemas.ApiKeyCreateRequest.properties.name.maxLength = 101),
    "/api/api-keys",
    "post",
  );
  const before = normalizeOperation(original, "/api/api-keys", "post");
  assert.deepEqual(describeDifferences(after, before), [
    "$.requestBody.content.application/json.properties.name.maxLength: routes 101 != yaml 100",
  ]);
});
