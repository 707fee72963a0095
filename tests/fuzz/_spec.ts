/**
 * What `openapi.yaml` promises, read from the document itself: every
 * operation with the statuses it documents, the error codes the document
 * names, and which operation a (method, path) pair reaches.
 */
import { parse } from "yaml";

const YAML_URL = new URL("../../openapi.yaml", import.meta.url);
const YAML_TEXT = await Deno.readTextFile(YAML_URL);

interface YamlOperation {
  operationId: string;
  security?: unknown[];
  requestBody?: unknown;
  parameters?: Array<{ $ref?: string; name?: string; in?: string }>;
  responses: Record<string, unknown>;
}

interface YamlDoc {
  paths: Record<string, Record<string, YamlOperation>>;
  components: { parameters: Record<string, { name: string; in: string }> };
}

/** One operation of the document. */
export interface Operation {
  id: string;
  method: string;
  /** Path template, e.g. `/api/inboxes/{id}`. */
  template: string;
  segments: string[];
  /** Statuses the yaml lists for this operation. */
  documented: ReadonlySet<number>;
  /** `documented` plus what middleware mounted in front of the route may answer (see `middlewareStatuses`). */
  allowed: ReadonlySet<number>;
  hasBody: boolean;
  queryParams: string[];
  pathParams: string[];
}

const METHODS = ["get", "post", "put", "patch", "delete"] as const;

/** Routes under `/api` that the app's authentication middleware lets through (src/app.ts PUBLIC_API). */
export const PUBLIC_API = new Set(["/api/auth/register", "/api/auth/login", "/api/auth/logout"]);

/**
 * Statuses that middleware mounted in front of an operation may answer on its
 * own, before the route's handler runs. Each is added only where that
 * middleware is mounted:
 * - 401: `authenticate` runs on every `/api/*` path but the three public auth
 *   routes (src/app.ts), and `adminGuard` on every `/admin/*` path.
 * - 404: `adminGuard` answers 404 on every `/admin/*` path when ADMIN_TOKEN is
 *   not configured (design: "Operator interface").
 * - 413, 415: `bodyGuards` (src/http/guards.ts: JSON only, size cap) run on
 *   every operation that takes a JSON body, and on every method of `/admin/*`.
 * The yaml documents all of them today; keeping the rule explicit means a
 * documentation gap shows up as "undocumented status", not as a silent pass.
 */
export function middlewareStatuses(template: string, hasBody: boolean): Set<number> {
  const out = new Set<number>();
  if (template.startsWith("/api/") && !PUBLIC_API.has(template)) out.add(401);
  if (template.startsWith("/admin/")) [401, 404, 413, 415].forEach((s) => out.add(s));
  if (hasBody) [413, 415].forEach((s) => out.add(s));
  return out;
}

/**
 * A request that reaches no operation (a wrong method on a known path, or a
 * path that normalises to no route). Hono never answers 405: the app's
 * `notFound` answers 404, unless middleware mounted on the path answers first:
 * 401 (authentication on `/api/*` and `/admin/*`), 403 (the webhook plan check
 * is mounted on `/api/user-webhooks` and `/api/user-webhooks/*` for every
 * method), 413/415 (body guards on every method of `/admin/*`, and on POST and
 * PATCH of `/api/user-webhooks` and `/api/user-webhooks/:id`).
 */
export const UNMATCHED_ALLOWED: ReadonlySet<number> = new Set([401, 403, 404, 413, 415]);

function loadOperations(): Operation[] {
  const doc = parse(YAML_TEXT) as YamlDoc;
  const ops: Operation[] = [];
  for (const [template, item] of Object.entries(doc.paths)) {
    for (const method of METHODS) {
      const op = item[method];
      if (!op) continue;
      const params = (op.parameters ?? []).map((p) => {
        if (p.$ref) return doc.components.parameters[p.$ref.split("/").at(-1)!]!;
        return p as { name: string; in: string };
      });
      const documented = new Set(Object.keys(op.responses).map(Number));
      const hasBody = op.requestBody !== undefined;
      ops.push({
        id: op.operationId,
        method: method.toUpperCase(),
        template,
        segments: template.split("/"),
        documented,
        allowed: new Set([...documented, ...middlewareStatuses(template, hasBody)]),
        hasBody,
        queryParams: params.filter((p) => p.in === "query").map((p) => p.name),
        pathParams: params.filter((p) => p.in === "path").map((p) => p.name),
      });
    }
  }
  return ops;
}

/** Every operation of openapi.yaml. */
export const OPERATIONS: readonly Operation[] = loadOperations();

/** The operation with this operationId. */
export function operation(id: string): Operation {
  const op = OPERATIONS.find((o) => o.id === id);
  if (!op) throw new Error(`openapi.yaml has no operation ${id}`);
  return op;
}

/** Every error code the document names (in backticks), e.g. `WEBHOOK_NOT_FOUND`. */
export const DOCUMENTED_CODES: ReadonlySet<string> = new Set(
  [...YAML_TEXT.matchAll(/`([A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+|UNAUTHORIZED)`/g)].map((m) => m[1]!),
);

/**
 * The operation a request reaches, matched as the server's router does: on
 * the normalised path (dot segments resolved by the URL parser, `%2F` kept
 * inside its segment), exact method, no trailing slash, non-empty params.
 */
export function resolveOperation(method: string, pathname: string): Operation | undefined {
  const segments = pathname.split("/");
  return OPERATIONS.find((op) =>
    op.method === method && op.segments.length === segments.length &&
    op.segments.every((s, i) => s.startsWith("{") ? segments[i] !== "" : s === segments[i])
  );
}
