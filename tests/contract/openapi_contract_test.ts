/**
 * The routes' own OpenAPI document (from the zod schemas) against the
 * hand-written `openapi.yaml`, which is the source of truth.
 *
 * Every operation the routes emit must be in the yaml and agree with it once
 * both are normalised. Yaml operations without a route yet are listed, not
 * failed: features land one at a time.
 */
import assert from "node:assert/strict";
import { parse } from "yaml";
import { createApp } from "../../src/app.ts";
import { loadConfig } from "../../src/config.ts";
import { compose } from "../../src/compose.ts";
import { staticResolver } from "../_helpers/resolver.ts";
import { TEST_ENCRYPTION_KEY } from "../_helpers/app.ts";
import {
  describeDifferences,
  listOperations,
  normalizeOperation,
  normalizeSchema,
  type OpenApiDoc,
  type OperationKey,
  operationLabel,
  resolvePointer,
} from "./normalize.ts";

const yamlDoc: OpenApiDoc = parse(await Deno.readTextFile(new URL("../../openapi.yaml", import.meta.url)));

/** The app as the service builds it; registering routes never touches the database. */
async function routesApp(): Promise<ReturnType<typeof createApp>> {
  const services = await compose({
    config: loadConfig({}),
    sql: {} as never,
    encryptionKey: TEST_ENCRYPTION_KEY,
    listen: false,
    resolver: staticResolver({}),
  });
  return createApp(services);
}

/** The document the routes emit. */
function routesDocument(app: ReturnType<typeof createApp>): OpenApiDoc {
  const doc = app.getOpenAPI31Document({ openapi: "3.1.0", info: { title: "x", version: "1" } });
  // Round-trip through JSON: the comparison must see what a client would, not zod objects.
  return JSON.parse(JSON.stringify(doc));
}

const app = await routesApp();
const routesDoc = routesDocument(app);

/**
 * The web UI's HTML pages and files (src/ui/routes.ts): pages like /docs, which read and write through the
 * documented operations.
 */
const UI_ROUTES = [
  "/ui",
  "/ui/assets/:name",
  "/ui/login",
  "/ui/inboxes",
  "/ui/inboxes/:id",
  "/ui/inboxes/:id/messages/:messageId",
  "/ui/webhooks",
  "/ui/webhooks/:id",
  "/ui/api-keys",
  "/ui/events",
];

/**
 * Served by the app but not HTTP API operations, so in neither document:
 * the reference page and its bundle, the documents themselves, metrics, the
 * MCP endpoint (JSON-RPC over Streamable HTTP; its tools call the documented
 * operations), and the web UI. They are mounted as plain Hono routes, which
 * `getOpenAPI31Document` does not see.
 */
const OUTSIDE_THE_DOCUMENT = [
  "/docs",
  "/docs/scalar.js",
  "/openapi.yaml",
  "/openapi.json",
  "/metrics",
  "/mcp",
  ...UI_ROUTES,
];

function keyOf(op: OperationKey): string {
  return `${op.method} ${op.path}`;
}

/** Every local `$ref` string anywhere in the value, with where it was found. */
function collectRefs(value: unknown, at: string, out: [string, string][] = []): [string, string][] {
  if (Array.isArray(value)) value.forEach((v, i) => collectRefs(v, `${at}[${i}]`, out));
  else if (typeof value === "object" && value !== null) {
    for (const [k, v] of Object.entries(value)) {
      if (k === "$ref" && typeof v === "string") out.push([at, v]);
      else collectRefs(v, `${at}.${k}`, out);
    }
  }
  return out;
}

Deno.test("openapi.yaml and the routes agree", async (t) => {
  const yamlOps = listOperations(yamlDoc);
  const routeOps = listOperations(routesDoc);
  const yamlKeys = new Set(yamlOps.map(keyOf));
  const routeKeys = new Set(routeOps.map(keyOf));

  await t.step("openapi.yaml is a basic OpenAPI 3.1 document", () => {
    assert.equal(typeof yamlDoc.openapi, "string");
    assert.ok(String(yamlDoc.openapi).startsWith("3.1"), `openapi is ${yamlDoc.openapi}, expected 3.1.x`);
    const info = yamlDoc.info as Record<string, unknown> | undefined;
    assert.equal(typeof info?.title, "string", "info.title is required");
    assert.equal(typeof info?.version, "string", "info.version is required");
    assert.ok(yamlOps.length > 0, "paths holds no operation");
    for (const [where, ref] of collectRefs(yamlDoc, "$")) {
      assert.doesNotThrow(() => resolvePointer(yamlDoc, ref), `${where}: $ref ${ref} does not resolve`);
    }
    const ids = yamlOps.map((op) => {
      const operation =
        (yamlDoc.paths as Record<string, Record<string, Record<string, unknown>>>)[op.path]![op.method]!;
      assert.ok(operation.responses, `${operationLabel(op)} has no responses`);
      return operation.operationId;
    });
    assert.deepEqual(ids.filter((id, i) => ids.indexOf(id) !== i), [], "operationIds must be unique");
  });

  await t.step("the endpoints outside the HTTP API are served, and in neither document", () => {
    const served = new Set(app.routes.map((r) => r.path));
    for (const path of OUTSIDE_THE_DOCUMENT) {
      assert.ok(served.has(path), `${path} is served`);
      assert.ok(!(path in (routesDoc.paths as object)), `${path} is not an operation of the routes' document`);
      assert.ok(!(path in (yamlDoc.paths as object)), `${path} is not an operation of openapi.yaml`);
    }
  });

  await t.step("every /ui route is one of the UI's pages or files, outside both documents", () => {
    // Handlers only: the UI's policy is middleware on `/ui/*` (method ALL).
    const handlers = app.routes.filter((r) => r.method !== "ALL").map((r) => r.path);
    const served = [...new Set(handlers.filter((p) => p === "/ui" || p.startsWith("/ui/")))];
    assert.deepEqual(served.toSorted(), UI_ROUTES.toSorted());
    const documented = [...Object.keys(routesDoc.paths as object), ...Object.keys(yamlDoc.paths as object)];
    assert.deepEqual(documented.filter((p) => p === "/ui" || p.startsWith("/ui/")), []);
  });

  await t.step("the routes emit no operation that openapi.yaml lacks", () => {
    const extra = routeOps.filter((op) => !yamlKeys.has(keyOf(op))).map(operationLabel);
    assert.deepEqual(extra, [], `operations served but not in openapi.yaml: ${extra.join(", ")}`);
  });

  for (const op of routeOps) {
    await t.step(operationLabel(op), () => {
      assert.ok(yamlKeys.has(keyOf(op)), `${operationLabel(op)} is not in openapi.yaml`);
      const actual = normalizeOperation(routesDoc, op.path, op.method);
      const expected = normalizeOperation(yamlDoc, op.path, op.method);
      const diff = describeDifferences(actual, expected);
      assert.deepEqual(
        actual,
        expected,
        `${operationLabel(op)} differs from openapi.yaml (routes vs yaml):\n  ${diff.join("\n  ")}`,
      );
    });
  }

  await t.step("schemas the routes name exist in openapi.yaml with the same shape", () => {
    // A zod `.openapi("Name")` becomes components.schemas.Name in the routes'
    // document; the generated types use the yaml's names, so they must match.
    const named = Object.keys((routesDoc.components as Record<string, Record<string, unknown>>)?.schemas ?? {});
    const problems: string[] = [];
    for (const name of named) {
      const ref = `#/components/schemas/${name}`;
      let expected: unknown;
      try {
        expected = normalizeSchema(yamlDoc, { $ref: ref });
      } catch {
        problems.push(`${name}: not in openapi.yaml components.schemas`);
        continue;
      }
      const actual = normalizeSchema(routesDoc, { $ref: ref });
      problems.push(...describeDifferences(actual, expected).map((d) => `${name}: ${d}`));
    }
    assert.deepEqual(problems, [], `component schemas drifted:\n  ${problems.join("\n  ")}`);
  });

  // Reported, not failed: these are features still to build.
  const pending = yamlOps.filter((op) => !routeKeys.has(keyOf(op))).map(operationLabel);
  console.log(
    `openapi.yaml operations not implemented yet (${pending.length} of ${yamlOps.length}):\n  ${pending.join("\n  ")}`,
  );
});
