/**
 * Canonical, comparable form of an OpenAPI 3.1 operation.
 *
 * The hand-written `openapi.yaml` and the document the zod routes emit say the
 * same thing in different shapes: `$ref` versus inline, `const` versus a
 * one-value `enum`, other key and `required` orders, other descriptions. This
 * module erases exactly those differences, and nothing that changes what a
 * client may send or receive, so `assert.deepEqual` on two normalised
 * operations fails only on real drift.
 */

/** A parsed OpenAPI document (JSON-compatible values only). */
export type OpenApiDoc = Record<string, unknown>;

/** The HTTP methods an OpenAPI path item may hold, in the order operations are listed. */
export const HTTP_METHODS = ["get", "put", "post", "delete", "options", "head", "patch", "trace"] as const;

/** One HTTP method of a path item. */
export type HttpMethod = (typeof HTTP_METHODS)[number];

/** An operation's place in a document. */
export interface OperationKey {
  path: string;
  method: HttpMethod;
}

/** A parameter or response header, reduced to what a client depends on. */
export interface NormalizedField {
  required: boolean;
  schema: unknown;
}

/** A response, reduced to its media types' schemas and its headers. */
export interface NormalizedResponse {
  content: Record<string, unknown>;
  headers: Record<string, NormalizedField>;
}

/** An operation in canonical form. */
export interface NormalizedOperation {
  parameters: Record<string, NormalizedField>;
  requestBody: { required: boolean; content: Record<string, unknown> } | null;
  responses: Record<string, NormalizedResponse>;
  security: unknown[];
}

// Keys that document a schema without constraining its instances.
const ANNOTATION_KEYS = new Set([
  "description",
  "summary",
  "title",
  "example",
  "examples",
  "deprecated",
  "externalDocs",
  "$comment",
]);

// Keywords whose value is a schema.
const SCHEMA_KEYWORDS = new Set([
  "items",
  "additionalProperties",
  "additionalItems",
  "unevaluatedProperties",
  "unevaluatedItems",
  "contains",
  "propertyNames",
  "not",
  "if",
  "then",
  "else",
  "contentSchema",
]);

// Keywords whose value is a list of schemas.
const SCHEMA_LIST_KEYWORDS = new Set(["allOf", "anyOf", "oneOf", "prefixItems"]);

// Keywords whose value maps names to schemas (the names are data, never annotations).
const SCHEMA_MAP_KEYWORDS = new Set(["properties", "patternProperties", "$defs", "definitions", "dependentSchemas"]);

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function isAnnotation(key: string): boolean {
  return ANNOTATION_KEYS.has(key) || key.startsWith("x-");
}

/** Follows a local JSON pointer (`#/components/...`) in the document; throws when it does not resolve. */
export function resolvePointer(doc: OpenApiDoc, ref: string): unknown {
  if (!ref.startsWith("#")) throw new Error(`only local $ref is supported, got ${ref}`);
  const tokens = ref.slice(1).split("/").slice(1).map((t) =>
    decodeURIComponent(t).replaceAll("~1", "/").replaceAll("~0", "~")
  );
  let node: unknown = doc;
  for (const token of tokens) {
    if (!isRecord(node) && !Array.isArray(node)) throw new Error(`unresolvable $ref ${ref}`);
    node = (node as Record<string, unknown>)[token];
    if (node === undefined) throw new Error(`unresolvable $ref ${ref}`);
  }
  return node;
}

/**
 * Follows `$ref` chains of a non-schema object (parameter, response, header,
 * request body) until a concrete object; a cycle is an error, since such a
 * document has no meaning.
 */
export function derefObject(doc: OpenApiDoc, value: unknown): Record<string, unknown> {
  const seen = new Set<string>();
  let node = value;
  while (isRecord(node) && typeof node.$ref === "string") {
    if (seen.has(node.$ref)) throw new Error(`$ref cycle through ${node.$ref}`);
    seen.add(node.$ref);
    node = resolvePointer(doc, node.$ref);
  }
  if (!isRecord(node)) throw new Error(`expected an object, got ${JSON.stringify(node)}`);
  return node;
}

/** Returns the value with every object's keys in sorted order, so printed diffs line up. */
export function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (!isRecord(value)) return value;
  return Object.fromEntries(Object.keys(value).sort().map((k) => [k, sortKeys(value[k])]));
}

/**
 * Canonical form of a schema: every `$ref` inlined (a cycle becomes
 * `{ $cycle: <pointer> }`), annotations dropped, `const` as a one-value
 * `enum`, `type` and `required` sorted, a one-element `type` list as a string.
 */
export function normalizeSchema(doc: OpenApiDoc, schema: unknown, stack: readonly string[] = []): unknown {
  if (typeof schema === "boolean" || !isRecord(schema)) return schema;

  if (typeof schema.$ref === "string") {
    const ref = schema.$ref;
    // A schema that refers back to one being expanded would expand forever;
    // the marker keeps recursive shapes comparable by where they point.
    if (stack.includes(ref)) return { $cycle: ref };
    const target = normalizeSchema(doc, resolvePointer(doc, ref), [...stack, ref]);
    const { $ref: _ref, ...siblings } = schema;
    const rest = normalizeSchema(doc, siblings, stack);
    // In 3.1 keywords beside $ref apply too; only annotations are usual
    // there, so merge when nothing collides and keep both otherwise.
    if (!isRecord(rest) || Object.keys(rest).length === 0) return target;
    if (!isRecord(target)) return sortKeys({ allOf: [target, rest] });
    const collides = Object.keys(rest).some((k) => k in target);
    return sortKeys(collides ? { allOf: [target, rest] } : { ...target, ...rest });
  }

  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(schema)) {
    if (isAnnotation(key)) continue;
    if (SCHEMA_KEYWORDS.has(key)) {
      out[key] = normalizeSchema(doc, value, stack);
    } else if (SCHEMA_LIST_KEYWORDS.has(key) && Array.isArray(value)) {
      out[key] = value.map((s) => normalizeSchema(doc, s, stack));
    } else if (SCHEMA_MAP_KEYWORDS.has(key) && isRecord(value)) {
      out[key] = Object.fromEntries(Object.entries(value).map(([k, s]) => [k, normalizeSchema(doc, s, stack)]));
    } else if (key === "type" && Array.isArray(value)) {
      const types = [...value].map(String).sort();
      out.type = types.length === 1 ? types[0] : types;
    } else if (key === "required" && Array.isArray(value)) {
      out.required = [...value].map(String).sort();
    } else if (key === "const") {
      // `const: v` and `enum: [v]` accept the same instances.
      if (!("enum" in schema)) out.enum = [value];
      else out.const = value;
    } else {
      // enum, default, format, bounds, pattern, discriminator...: data, kept verbatim.
      out[key] = value;
    }
  }
  return sortKeys(out);
}

function normalizeContent(doc: OpenApiDoc, content: unknown): Record<string, unknown> {
  if (!isRecord(content)) return {};
  const out: Record<string, unknown> = {};
  for (const type of Object.keys(content).sort()) {
    const media = content[type];
    out[type] = isRecord(media) && "schema" in media ? normalizeSchema(doc, media.schema) : null;
  }
  return out;
}

/** A parameter's or header's schema: `schema`, or the schema of its single `content` entry. */
function fieldSchema(doc: OpenApiDoc, field: Record<string, unknown>): unknown {
  if ("schema" in field) return normalizeSchema(doc, field.schema);
  if (isRecord(field.content)) return { content: normalizeContent(doc, field.content) };
  return null;
}

/** Parameters of a path item and its operation (the operation's win), keyed `in:name`. */
export function normalizeParameters(
  doc: OpenApiDoc,
  pathItem: Record<string, unknown>,
  operation: Record<string, unknown>,
): Record<string, NormalizedField> {
  const merged = new Map<string, Record<string, unknown>>();
  for (const list of [pathItem.parameters, operation.parameters]) {
    if (!Array.isArray(list)) continue;
    for (const raw of list) {
      const p = derefObject(doc, raw);
      // Header names are case-insensitive (RFC 9110): `Last-Event-ID` and `last-event-id` are one parameter.
      const name = p.in === "header" ? String(p.name).toLowerCase() : String(p.name);
      merged.set(`${String(p.in)}:${name}`, p);
    }
  }
  const out: Record<string, NormalizedField> = {};
  for (const key of [...merged.keys()].sort()) {
    const p = merged.get(key)!;
    // Path parameters are always required; the others default to optional.
    const required = p.in === "path" ? true : p.required === true;
    const field: NormalizedField & Record<string, unknown> = { required, schema: fieldSchema(doc, p) };
    // Serialisation changes what goes on the wire, so keep it when stated.
    for (const k of ["style", "explode", "allowReserved", "allowEmptyValue"]) if (k in p) field[k] = p[k];
    out[key] = field;
  }
  return out;
}

/** Response headers by name: `required` (default false) and the normalised schema. */
export function normalizeHeaders(doc: OpenApiDoc, headers: unknown): Record<string, NormalizedField> {
  if (!isRecord(headers)) return {};
  const out: Record<string, NormalizedField> = {};
  for (const name of Object.keys(headers).sort()) {
    const h = derefObject(doc, headers[name]);
    out[name] = { required: h.required === true, schema: fieldSchema(doc, h) };
  }
  return out;
}

/** Responses by status: content types to normalised schemas, and headers. */
export function normalizeResponses(doc: OpenApiDoc, responses: unknown): Record<string, NormalizedResponse> {
  if (!isRecord(responses)) return {};
  const out: Record<string, NormalizedResponse> = {};
  for (const status of Object.keys(responses).sort()) {
    const r = derefObject(doc, responses[status]);
    out[status] = { content: normalizeContent(doc, r.content), headers: normalizeHeaders(doc, r.headers) };
  }
  return out;
}

/** Security requirements in a canonical order (alternatives are a set, as are scopes). */
function normalizeSecurity(security: unknown): unknown[] {
  if (!Array.isArray(security)) return [];
  const reqs = security.map((req) =>
    isRecord(req)
      ? sortKeys(Object.fromEntries(
        Object.entries(req).map(([k, v]) => [k, Array.isArray(v) ? [...v].map(String).sort() : v]),
      ))
      : req
  );
  return reqs.sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b)));
}

/** Every operation under `paths`, in document order. */
export function listOperations(doc: OpenApiDoc): OperationKey[] {
  const out: OperationKey[] = [];
  const paths = isRecord(doc.paths) ? doc.paths : {};
  for (const [path, item] of Object.entries(paths)) {
    if (!isRecord(item)) continue;
    for (const method of HTTP_METHODS) if (isRecord(item[method])) out.push({ path, method });
  }
  return out;
}

/** `METHOD /path`, for messages. */
export function operationLabel(op: OperationKey): string {
  return `${op.method.toUpperCase()} ${op.path}`;
}

/** The canonical form of one operation; throws when the document lacks it. */
export function normalizeOperation(doc: OpenApiDoc, path: string, method: HttpMethod): NormalizedOperation {
  const paths = isRecord(doc.paths) ? doc.paths : {};
  const item = paths[path] === undefined ? undefined : derefObject(doc, paths[path]);
  const operation = item?.[method];
  if (!item || !isRecord(operation)) throw new Error(`no operation ${operationLabel({ path, method })}`);

  let requestBody: NormalizedOperation["requestBody"] = null;
  if (operation.requestBody !== undefined) {
    const body = derefObject(doc, operation.requestBody);
    requestBody = { required: body.required === true, content: normalizeContent(doc, body.content) };
  }
  return {
    parameters: normalizeParameters(doc, item, operation),
    requestBody,
    responses: normalizeResponses(doc, operation.responses),
    // An operation without `security` inherits the document's.
    security: normalizeSecurity(operation.security ?? doc.security),
  };
}

/**
 * Lists where two normalised values differ, one line per JSON path, so a
 * failing contract names the exact field instead of dumping two documents.
 */
export function describeDifferences(
  actual: unknown,
  expected: unknown,
  names: readonly [string, string] = ["routes", "yaml"],
  at = "$",
): string[] {
  const [a, e] = names;
  if (isRecord(actual) && isRecord(expected)) {
    const keys = [...new Set([...Object.keys(actual), ...Object.keys(expected)])].sort();
    return keys.flatMap((k) => {
      const where = `${at}.${k}`;
      if (!(k in expected)) return [`${where}: only in ${a}: ${JSON.stringify(actual[k])}`];
      if (!(k in actual)) return [`${where}: only in ${e}: ${JSON.stringify(expected[k])}`];
      return describeDifferences(actual[k], expected[k], names, where);
    });
  }
  if (JSON.stringify(actual) === JSON.stringify(expected)) return [];
  if (Array.isArray(actual) && Array.isArray(expected) && actual.length === expected.length) {
    return actual.flatMap((v, i) => describeDifferences(v, expected[i], names, `${at}[${i}]`));
  }
  return [`${at}: ${a} ${JSON.stringify(actual)} != ${e} ${JSON.stringify(expected)}`];
}
