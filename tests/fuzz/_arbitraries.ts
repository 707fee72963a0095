/**
 * fast-check generators of hostile requests: bodies, headers, credentials,
 * path ids and query strings, each mixing random values with known-nasty ones.
 * Webhook URLs only ever name hosts that do not resolve here or that the
 * service refuses, so no generated request makes the service call out.
 */
import fc from "npm:fast-check@4.10.2";
import { crc32 } from "node:zlib";
import { ADMIN_TOKEN } from "../_helpers/app.ts";
import {
  type Body,
  type Case,
  type CookiePart,
  Entries,
  type Fixture,
  normaliseMethod,
  ownedBy,
  PASSWORD,
  type PrincipalName,
  PRINCIPALS,
  printable,
  Raw,
  toJsonText,
} from "./_harness.ts";
import { type Operation, OPERATIONS } from "./_spec.ts";

// ---------------------------------------------------------------- values

/** Strings that have broken parsers, databases and routers before. */
export const NASTY_STRINGS: readonly string[] = [
  "",
  " ",
  "\u0000",
  "a\u0000b",
  "\uD800",
  "\uDFFF",
  "x\uD83D",
  "\uDE00y",
  "\u202Egnp.exe",
  "\uFEFF",
  "\u200B",
  "e\u0301",
  "𝕏🙂",
  "\\",
  '"',
  "'",
  "' OR '1'='1",
  "'; DROP TABLE accounts; --",
  "$1",
  "${x}",
  "{{x}}",
  "%s%n",
  "%00",
  "../../etc/passwd",
  "<script>alert(1)</script>",
  "\r\n",
  "\t",
  "null",
  "undefined",
  "NaN",
  "-0",
  "true",
  "[]",
  "{}",
  "__proto__",
  "constructor",
  "toString",
  "A".repeat(257),
];

/** Keys that a careless object merge turns into prototype pollution, plus real field names. */
export const NASTY_KEYS: readonly string[] = [
  "__proto__",
  "constructor",
  "prototype",
  "toString",
  "hasOwnProperty",
  "valueOf",
  "",
  "\u0000",
  "name",
  "url",
  "events",
  "secret",
  "active",
  "email",
  "password",
  "plan",
  "localPart",
  "ttlSeconds",
  "id",
  "accountId",
];

/** Number spellings JSON.stringify cannot produce: overflow, negative zero, past 2^53, exponents. */
export const EDGE_NUMBERS: readonly string[] = [
  "1e309",
  "-1e309",
  "-0",
  "-0.0",
  "0",
  "1",
  "-1",
  "9007199254740993",
  "-9007199254740993",
  "1e-400",
  "0.5",
  "3600.0",
  "3.6e3",
  "1E2",
  "123456789012345678901234567890",
  "2147483648",
  "-2147483649",
  "59",
  "60",
  "604800",
  "604801",
  "100",
  "101",
  "1.0000000000000002",
];

/** JSON texts a parser must refuse (or read in a surprising way). */
export const INVALID_JSON: readonly string[] = [
  "",
  " ",
  "{",
  "}",
  "[",
  "[1,]",
  '{"a":1,}',
  "{'a':1}",
  "{a:1}",
  "NaN",
  "Infinity",
  "-Infinity",
  "undefined",
  '{"a":1}x',
  "{}{}",
  "\u0000",
  '{"name":"\\ud800"}',
  '{"name":"\\u0000"}',
  '{"a":"\\x41"}',
  "tru",
  "nul",
  '"open',
  '{"a" 1}',
  "/*c*/{}",
  "\uFEFF{}",
  '{"a":01}',
  '{"a":.5}',
  '{"a":+1}',
  '{"a":0x10}',
  '["\t"]',
  '{"a":"\n"}',
  "null",
  "0",
  '""',
  "[]",
  "true",
];

const nastyString = fc.constantFrom(...NASTY_STRINGS);
const hugeString = fc.integer({ min: 1_000, max: 80_000 }).map((n) => "x".repeat(n));

/** Short strings: random unicode, control characters, known-nasty ones. */
export const smallString: fc.Arbitrary<string> = fc.oneof(
  { weight: 3, arbitrary: fc.string({ unit: "binary", maxLength: 30 }) },
  { weight: 2, arbitrary: nastyString },
  { weight: 1, arbitrary: fc.string({ unit: "binary-ascii", maxLength: 30 }) },
  { weight: 1, arbitrary: fc.tuple(fc.string(), nastyString, fc.string()).map(([a, b, c]) => a + b + c) },
);

/** Any string: `smallString` or a huge one (past the body limit). */
export const anyString: fc.Arbitrary<string> = fc.oneof(
  { weight: 7, arbitrary: smallString },
  { weight: 1, arbitrary: hugeString },
);

const edgeNumber: fc.Arbitrary<unknown> = fc.oneof(
  fc.constantFrom(...EDGE_NUMBERS).map((t) => new Raw(t)),
  fc.integer(),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
);

/** Nesting thousands deep, as arrays or as objects. */
const deep: fc.Arbitrary<unknown> = fc.tuple(fc.integer({ min: 2, max: 20_000 }), fc.boolean()).map(([d, arrays]) =>
  new Raw(arrays ? `${"[".repeat(d)}1${"]".repeat(d)}` : `${'{"a":'.repeat(d)}1${"}".repeat(d)}`)
);

const keyArb = fc.oneof(fc.constantFrom(...NASTY_KEYS), fc.string({ unit: "binary", maxLength: 10 }));

const leaf: fc.Arbitrary<unknown> = fc.oneof(anyString, edgeNumber, fc.boolean(), fc.constant(null));

/** Any JSON-ish value, including raw number spellings, repeated keys and `__proto__` keys. */
export const anyJson: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 3, arbitrary: fc.jsonValue({ maxDepth: 3, stringUnit: "binary" }) },
  { weight: 2, arbitrary: fc.anything({ maxDepth: 2 }) },
  { weight: 2, arbitrary: leaf },
  { weight: 1, arbitrary: deep },
  { weight: 1, arbitrary: fc.array(leaf, { maxLength: 5 }) },
  { weight: 2, arbitrary: fc.array(fc.tuple(keyArb, leaf), { maxLength: 5 }).map((e) => new Entries(e)) },
);

/** JSON-ish values small enough for a URL (a request line past ~64 KB is refused by Deno's HTTP server, not the app). */
const smallJson: fc.Arbitrary<unknown> = fc.oneof(
  fc.jsonValue({ maxDepth: 2, stringUnit: "binary" }),
  fc.array(fc.oneof(smallString, edgeNumber, fc.constant(null)), { maxLength: 3 }),
);

function utf16le(text: string): Uint8Array {
  const out = new Uint8Array(text.length * 2);
  for (let i = 0; i < text.length; i++) {
    const unit = text.charCodeAt(i);
    out[2 * i] = unit & 0xff;
    out[2 * i + 1] = unit >> 8;
  }
  return out;
}

/** A random body: JSON values, invalid JSON text, raw bytes, UTF-16 JSON, or none. */
export const randomBody: fc.Arbitrary<Body> = fc.oneof(
  { weight: 4, arbitrary: anyJson.map((value): Body => ({ kind: "json", value })) },
  {
    weight: 2,
    arbitrary: fc.oneof(fc.constantFrom(...INVALID_JSON), fc.string({ unit: "binary", maxLength: 50 }), fc.json())
      .map((text): Body => ({ kind: "text", text })),
  },
  { weight: 1, arbitrary: fc.uint8Array({ maxLength: 64 }).map((bytes): Body => ({ kind: "bytes", bytes })) },
  { weight: 1, arbitrary: anyJson.map((v): Body => ({ kind: "bytes", bytes: utf16le(toJsonText(v)) })) },
  { weight: 1, arbitrary: fc.constant<Body>({ kind: "none" }) },
);

// ---------------------------------------------------------------- headers

/** A header value fetch sends: Latin-1 text without control characters (tab aside). */
export const headerValue: fc.Arbitrary<string> = fc.oneof(
  fc.string({ unit: "binary-ascii", maxLength: 60 }).map((s) =>
    [...s].filter((ch) => ch === "\t" || (ch >= " " && ch !== "\x7f")).join("")
  ),
  fc.string({ maxLength: 60 }),
);

export const CONTENT_TYPES: readonly string[] = [
  "application/json",
  "application/json; charset=utf-8",
  "application/json; charset=utf-16",
  "application/json;charset=UTF-16LE",
  "APPLICATION/JSON",
  "Application/Json ; charset=utf-8",
  "application/vnd.api+json",
  "application/problem+json",
  "application/json-patch+json",
  "application/jsonx",
  "application/json5",
  "application/x-json",
  "text/json",
  "text/plain",
  "text/plain;charset=UTF-8",
  "text/html",
  "multipart/form-data; boundary=----fuzz",
  "application/x-www-form-urlencoded",
  "application/xml",
  "application/octet-stream",
  "*/*",
  "application/*",
  "",
  "json",
  "application/json, text/plain",
];

const contentType = fc.oneof(fc.constantFrom(...CONTENT_TYPES), headerValue);

/** Content-Type headers: missing, one of many, random, or sent twice. */
export const contentTypeHeaders: fc.Arbitrary<Array<[string, string]>> = fc.oneof(
  { weight: 3, arbitrary: fc.constant<Array<[string, string]>>([["content-type", "application/json"]]) },
  { weight: 1, arbitrary: fc.constant<Array<[string, string]>>([]) },
  { weight: 3, arbitrary: contentType.map((t): Array<[string, string]> => [["content-type", t]]) },
  {
    weight: 1,
    arbitrary: fc.tuple(contentType, contentType).map(([a, b]): Array<[string, string]> => [
      ["content-type", a],
      ["content-type", b],
    ]),
  },
);

/** A few unrelated headers a client might send. */
export const extraHeaders: fc.Arbitrary<Array<[string, string]>> = fc.array(
  fc.tuple(fc.constantFrom("x-request-id", "accept", "accept-encoding", "origin", "x-forwarded-for"), headerValue),
  { maxLength: 2 },
);

const BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

/** The key format's checksum (src/api_keys/key_format.ts), to forge well-formed keys nobody issued. */
function withChecksum(body: string): string {
  let n = crc32(body);
  let out = "";
  for (let i = 0; i < 6; i++) {
    out = BASE62[n % 62] + out;
    n = Math.floor(n / 62);
  }
  return body + out;
}

/** Authorization values: garbage, near-valid keys, other schemes, the admin token in the wrong place, huge ones. */
export function authorizationArb(fx: Fixture): fc.Arbitrary<string | null> {
  const key = fc.constantFrom(fx.keys.pro, fx.keys.business);
  const nearKey = fc.tuple(key, fc.nat(), fc.constantFrom(...BASE62)).map(([k, i, ch]) => {
    const at = 4 + (i % (k.length - 4));
    return k.slice(0, at) + ch + k.slice(at + 1);
  });
  const email = fx.users.pro.email;
  return fc.oneof(
    fc.constant(null),
    headerValue,
    key.map((k) => `Bearer ${k}`),
    nearKey.map((k) => `Bearer ${k}`),
    key.map((k) => `Bearer ${k.slice(0, -1)}`),
    key.map((k) => `Bearer ${k}x`),
    key.map((k) => `Bearer ${k.toLowerCase()}`),
    fc.stringMatching(/^[0-9A-Za-z]{32}$/).map((r) => `Bearer ${withChecksum(`isk_${r}`)}`),
    fc.tuple(fc.constantFrom("bearer", "BEARER", "Bearer  ", "Bearer\t", "Token", "Basic", "Bearer:", "Bearer="), key)
      .map(([scheme, k]) => `${scheme} ${k}`),
    key.map((k) => `Bearer ${k} extra`),
    key.map((k) => `Bearer ${k}, Bearer ${k}`),
    fc.constantFrom(
      "Bearer",
      "Bearer ",
      "Bearer isk_",
      "Basic",
      `Basic ${btoa("user:pass")}`,
      `Basic ${btoa(`${email}:${PASSWORD}`)}`,
      `Bearer ${ADMIN_TOKEN}`,
      `Bearer ${ADMIN_TOKEN}x`,
      `Bearer ${ADMIN_TOKEN.slice(0, -1)}`,
      ADMIN_TOKEN,
    ),
    fc.integer({ min: 1_000, max: 16_000 }).map((n) => `Bearer ${"a".repeat(n)}`),
    fc.integer({ min: 1_000, max: 16_000 }).map((n) => `Bearer isk_${"A".repeat(n)}`),
  );
}

const SESSION_PRINCIPALS: readonly PrincipalName[] = ["free-session", "pro-session", "business-session"];

/** Cookie headers: live sessions (of anyone), garbage, look-alikes, several at once. */
export const cookieArb: fc.Arbitrary<CookiePart[]> = fc.array(
  fc.oneof(
    fc.constantFrom(...SESSION_PRINCIPALS).map((session): CookiePart => ({ session })),
    headerValue.map((v): CookiePart => ({ raw: `session=${v.replaceAll(";", "")}` })),
    headerValue.map((raw): CookiePart => ({ raw })),
    fc.constantFrom(
      "session=",
      "session",
      "session=%00",
      "session=%E0%A4%A",
      'session="abc"',
      "SESSION=abc",
      `session=${"a".repeat(128)}`,
      `session=${"a".repeat(129)}`,
      "=session",
      "session==",
      "session=a; session=b",
      "session=deleted; Max-Age=0",
    ).map((raw): CookiePart => ({ raw })),
    fc.integer({ min: 100, max: 8_000 }).map((n): CookiePart => ({ raw: `session=${"b".repeat(n)}` })),
  ),
  { maxLength: 3 },
);

// ---------------------------------------------------------------- ids and queries

/** Path segments that a router or decoder may treat specially. Inserted as is. */
export const RAW_IDS: readonly string[] = [
  "..",
  ".",
  "%2e%2e",
  "%2E",
  "%2F",
  "a%2Fb",
  "%2F..%2F",
  "%00",
  "a%00b",
  "%",
  "%zz",
  "%E0%A4%A",
  "%C0%AF",
  "%ED%A0%80",
  "%FF",
  "%25",
  "%25%32%46",
  "%5C..%5C",
  ";",
  "a;b=c",
  "*",
  "~",
  "null",
  "undefined",
  "0",
  "-1",
  "1e309",
  "__proto__",
  "constructor",
  "%20",
  "+",
  "%2B",
  "%F0%9F%99%82",
  "%EF%BF%BD",
];

/**
 * A path id as a recipe, rendered when the case is built: `own` picks one of
 * the principal's objects (for a second parameter, a child of the first),
 * `pool` any seeded object of the right kind, `near` a near miss of one.
 */
export type IdSpec = { own: number } | { pool: number } | { near: number; how: number } | { raw: string };

export const idSpec: fc.Arbitrary<IdSpec> = fc.oneof(
  { weight: 2, arbitrary: fc.nat().map((own): IdSpec => ({ own })) },
  { weight: 1, arbitrary: fc.nat().map((pool): IdSpec => ({ pool })) },
  { weight: 1, arbitrary: fc.record({ near: fc.nat(), how: fc.nat({ max: 6 }) }) },
  { weight: 2, arbitrary: fc.constantFrom(...RAW_IDS).map((raw): IdSpec => ({ raw })) },
  {
    weight: 2,
    arbitrary: fc.string({ unit: "binary", minLength: 1, maxLength: 30 }).map((s): IdSpec => ({
      raw: encodeURIComponent(s.toWellFormed()),
    })),
  },
  { weight: 1, arbitrary: fc.integer({ min: 100, max: 8_000 }).map((n): IdSpec => ({ raw: "i".repeat(n) })) },
);

function poolFor(fx: Fixture, template: string, param: string): string[] {
  if (param === "deliveryId") return fx.pool.deliveries;
  if (param === "messageId") return fx.pool.messages;
  if (param === "attachmentId") return fx.pool.attachments;
  if (template.startsWith("/api/api-keys/")) return fx.pool.apiKeys;
  if (template.startsWith("/api/user-webhooks/")) return fx.pool.webhooks;
  if (template.startsWith("/api/inboxes/")) return fx.pool.inboxes;
  if (template.startsWith("/admin/accounts/")) return fx.pool.accounts;
  throw new Error(`no id pool for ${param} of ${template}`);
}

function ownedFor(fx: Fixture, p: PrincipalName, template: string, param: string): string[] {
  const o = ownedBy(fx, p);
  if (param === "deliveryId") return o.deliveries.map((d) => d.id);
  if (param === "messageId") return o.messageIds.map(([, m]) => m);
  if (param === "attachmentId") return o.attachmentIds.map(([, a]) => a);
  if (template.startsWith("/api/api-keys/")) return o.spareKeyIds;
  if (template.startsWith("/api/user-webhooks/")) return o.webhookIds;
  if (template.startsWith("/api/inboxes/")) return o.inboxIds;
  return poolFor(fx, template, param);
}

function pick(list: string[], n: number): string {
  return list[n % list.length]!;
}

function renderId(pool: string[], own: string[], spec: IdSpec): string {
  if ("raw" in spec) return spec.raw;
  if ("own" in spec) return encodeURIComponent(pick(own, spec.own));
  if ("pool" in spec) return encodeURIComponent(pick(pool, spec.pool));
  const id = pool[spec.near % pool.length]!;
  switch (spec.how) {
    case 0:
      return id.toUpperCase();
    case 1:
      return `${id}x`;
    case 2:
      return id.slice(0, -1);
    case 3:
      return `${id}%00`;
    case 4:
      return `${id}%2F`;
    case 5:
      return `%20${id}`;
    default:
      return `${id}/`;
  }
}

/** A template's path with its parameters filled in from `ids`, as `principal` would aim them. */
export function fillPath(fx: Fixture, principal: PrincipalName, template: string, ids: IdSpec[]): string {
  let i = 0;
  let parent: string | undefined;
  return template.replace(/\{(\w+)\}/g, (_m, param: string) => {
    const pool = poolFor(fx, template, param);
    const children = parent === undefined ? undefined : fx.pool.children.get(parent);
    const own = children ?? ownedFor(fx, principal, template, param);
    const segment = renderId(pool, own, ids[i++]!);
    parent = decodeURIComponentSafe(segment);
    return segment;
  });
}

function decodeURIComponentSafe(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}

const LIMITS: readonly string[] = [
  "-1",
  "0",
  "1",
  "20",
  "100",
  "101",
  "1.5",
  "1e2",
  "0x10",
  "%205",
  "5%20",
  "abc",
  "",
  "NaN",
  "Infinity",
  "-Infinity",
  "9999999999999999999999",
  "-0",
  "%00",
  "1%00",
  "%31",
  "1,2",
  "[1]",
  "%2B1",
  "01",
  "1e-7",
  "9007199254740993",
];

function base64url(text: string): string {
  const bytes = new TextEncoder().encode(text);
  let bin = "";
  for (const b of bytes) bin += String.fromCharCode(b);
  return btoa(bin).replaceAll("+", "-").replaceAll("/", "_").replace(/=+$/, "");
}

/** The `at` of a forged cursor: dates across the whole JS range, odd spellings, other types. */
const cursorAt: fc.Arbitrary<unknown> = fc.oneof(
  fc.date({ noInvalidDate: true }).map((d) => d.toISOString()),
  fc.constantFrom(
    "-271821-04-20T00:00:00.000Z",
    "+275760-09-13T00:00:00.000Z",
    "0000-01-01T00:00:00Z",
    "-000001-01-01T00:00:00.000Z",
    "2026-01-01",
    "2026-01-01T00:00:00Z",
    "now",
    "infinity",
    "1970-01-01T00:00:00.000Z",
  ),
  fc.integer(),
  fc.double(),
  fc.constant(null),
  smallString,
);

/** The id of a forged cursor: pool ids, digit strings up to and past bigint, anything. */
function cursorId(fx: Fixture): fc.Arbitrary<unknown> {
  return fc.oneof(
    fc.constantFrom(...fx.pool.inboxes, ...fx.pool.messages),
    fc.stringMatching(/^\d{1,19}$/),
    fc.constantFrom("9223372036854775807", "9223372036854775808", "9999999999999999999", "0", "-1", "1e3"),
    smallString,
    fc.integer(),
  );
}

/** Cursor values: random text, base64 of anything, and well-formed cursors with hostile contents. */
function cursorArb(fx: Fixture): fc.Arbitrary<string> {
  return fc.oneof(
    fc.string({ unit: "binary", maxLength: 40 }).map((s) => encodeURIComponent(s.toWellFormed())),
    fc.base64String({ maxLength: 60 }).map(encodeURIComponent),
    fc.tuple(cursorAt, cursorId(fx)).map(([at, id]) => base64url(toJsonText([at, id]))),
    smallJson.map((v) => base64url(toJsonText(v))),
    fc.constantFrom("", "%00", "null", "W10", "e30", "W251bGwsbnVsbF0", "====", "%E0%A4%A"),
  );
}

const pad = (n: number, width: number) => String(n).padStart(width, "0");

/**
 * `since` values in the ISO format the schema accepts, over every year it can
 * spell (0000..9999, the ends weighted) and every offset, so that the storable
 * range (UTC years 0001..9999, TimestampInputSchema) is crossed both ways; and
 * its exact bounds.
 */
const sinceArb: fc.Arbitrary<string> = fc.oneof(
  fc.record({
    year: fc.oneof(fc.integer({ min: 0, max: 9999 }), fc.constantFrom(0, 1, 9999)),
    month: fc.integer({ min: 1, max: 12 }),
    day: fc.oneof(fc.integer({ min: 1, max: 28 }), fc.constantFrom(1, 28)),
    time: fc.tuple(fc.integer({ min: 0, max: 23 }), fc.integer({ min: 0, max: 59 }), fc.integer({ min: 0, max: 59 })),
    ms: fc.option(fc.integer({ min: 0, max: 999 }), { nil: undefined }),
    offset: fc.oneof(
      fc.constant("Z"),
      fc.tuple(fc.constantFrom("+", "-"), fc.integer({ min: 0, max: 23 }), fc.integer({ min: 0, max: 59 }))
        .map(([sign, h, m]) => `${sign}${pad(h, 2)}:${pad(m, 2)}`),
    ),
  }).map(({ year, month, day, time: [h, m, sec], ms, offset }) =>
    `${pad(year, 4)}-${pad(month, 2)}-${pad(day, 2)}T${pad(h, 2)}:${pad(m, 2)}:${pad(sec, 2)}` +
    `${ms === undefined ? "" : `.${pad(ms, 3)}`}${offset}`
  ),
  fc.constantFrom(
    "0000-01-01T00:00:00Z",
    "0001-01-01T00:00:00Z",
    "0001-01-01T00:00:00+00:01",
    "0000-01-01T00:00:00+23:59",
    "9999-12-31T23:59:59.999Z",
    "9999-12-31T23:59:59.999-23:59",
    "9999-12-31T23:59:59.9999999Z",
  ),
);

/** A query string (with `?`, or empty): maybe a limit, maybe a cursor, maybe odd or unknown parameters. */
export function queryArb(fx: Fixture): fc.Arbitrary<string> {
  const limit = fc.oneof(
    { weight: 3, arbitrary: fc.integer({ min: 1, max: 100 }).map(String) },
    { weight: 3, arbitrary: fc.constantFrom(...LIMITS) },
    { weight: 1, arbitrary: fc.integer().map(String) },
    { weight: 1, arbitrary: fc.double().map((d) => encodeURIComponent(String(d))) },
    { weight: 1, arbitrary: fc.string({ maxLength: 8 }).map((s) => encodeURIComponent(s)) },
  );
  const enc = (s: string) => encodeURIComponent(s.toWellFormed());
  const odd = fc.oneof(
    fc.tuple(keyArb, smallString).map(([k, v]) => `${enc(k)}=${enc(v)}`),
    fc.constantFrom(
      "limit",
      "cursor",
      "limit=",
      "cursor=",
      "&",
      "=",
      "%",
      "limit[]=1",
      "limit=1&limit=2",
      "cursor=a&cursor=b",
      "__proto__=x",
      "constructor[prototype][x]=1",
      "LIMIT=5",
      // The wait and the message filters (a valid long hold is never drawn: see buildCase).
      "timeoutMs=-1",
      "timeoutMs=1.5",
      "timeoutMs=abc",
      "timeoutMs=55001",
      "timeoutMs=",
      "timeoutMs=50",
      "timeoutMs=0&timeoutMs=1",
      "since=yesterday",
      "since=2026-01-01T00:00:00Z",
      "after=msg_unknown",
      "from=%00",
      "subject=",
      `contains=${"x".repeat(600)}`,
    ),
  );
  return fc.record({
    limit: fc.option(limit.map((v) => `limit=${v}`), { nil: undefined }),
    cursor: fc.option(cursorArb(fx).map((v) => `cursor=${v}`), { nil: undefined }),
    since: fc.option(sinceArb.map((v) => `since=${encodeURIComponent(v)}`), { nil: undefined }),
    odd: fc.array(odd, { maxLength: 2 }),
  }).map(({ limit, cursor, since, odd }) => {
    const parts = [limit, cursor, since, ...odd].filter((p) => p !== undefined);
    return parts.length > 0 ? `?${parts.join("&")}` : "";
  });
}

// ---------------------------------------------------------------- valid-looking bodies

const EVENTS = ["message.received", "inbox.created", "inbox.expired"];
const PLANS = ["free", "pro", "business"];

/** Hosts that never resolve here (the test resolver knows no names). */
const safeHost = fc.stringMatching(/^[a-z][a-z0-9-]{0,10}[a-z0-9]$/).map((l) => `${l}.example.com`);

/** URLs the service refuses (unsafe, malformed, wrong scheme). No public IP literal: nothing may be reached. */
export const REFUSED_URLS: readonly string[] = [
  "https://127.0.0.1/",
  "https://localhost/hook",
  "https://foo.localhost/",
  "https://10.0.0.1/",
  "https://192.168.1.1/",
  "https://172.16.0.1/",
  "https://100.64.0.1/",
  "https://169.254.169.254/latest/meta-data",
  "https://[::1]/",
  "https://[::ffff:127.0.0.1]/",
  "https://[fd00::1]/",
  "https://[64:ff9b::a00:1]/",
  "https://0/",
  "https://0.0.0.0/",
  "https://2130706433/",
  "https://0x7f000001/",
  "https://017700000001/",
  "https://127.1/",
  "https://0x7f.1/",
  "https://127\u30020\u30020\u30021/",
  "https://\uFF11\uFF12\uFF17.0.0.1/",
  "https://[::]/",
  "https://224.0.0.1/",
  "http://hooks.example.com/",
  "https://user:pw@hooks.example.com/",
  "https://user@hooks.example.com/",
  "ftp://hooks.example.com/",
  "javascript:alert(1)",
  "https://",
  "https:///path",
  "not a url",
  "//hooks.example.com/",
  "https://hooks.example.com:99999/",
  "https://hooks.exa\u0000mple.com/",
  `https://hooks.example.com/${"a".repeat(2100)}`,
];

/** Webhook URLs: accepted ones on unresolvable names, odd but harmless spellings, and refused ones. */
export const webhookUrl: fc.Arbitrary<string> = fc.oneof(
  {
    weight: 3,
    arbitrary: fc.tuple(safeHost, fc.stringMatching(/^\/[A-Za-z0-9._~\/-]{0,20}$/)).map(([h, p]) => `https://${h}${p}`),
  },
  {
    weight: 1,
    arbitrary: fc.constantFrom(
      "https://hooks.example.com/\u0000",
      "https://\uFF48\uFF4F\uFF4F\uFF4B\uFF53.example.com/",
      "https://xn--80ak6aa92e.example.com/",
      "HTTPS://HOOKS.EXAMPLE.COM/UPPER",
      "https://hooks.example.com:0/",
      "https://hooks.example.com/?q=%00#frag",
      "https://hooks.example.com/\uD800",
    ),
  },
  { weight: 2, arbitrary: fc.constantFrom(...REFUSED_URLS) },
);

const email = fc.stringMatching(/^[a-z0-9]{1,10}$/).map((s) => `fz-${s}@example.com`);

type Fields = Array<readonly [string, unknown]>;

const optional = (name: string, arb: fc.Arbitrary<unknown>): fc.Arbitrary<Fields> =>
  fc.option(arb, { nil: undefined }).map((v): Fields => (v === undefined ? [] : [[name, v]]));

const fields = (...parts: fc.Arbitrary<Fields>[]): fc.Arbitrary<Fields> =>
  fc.tuple(...parts).map((ps) => ps.flat() as Fields);

const required = (name: string, arb: fc.Arbitrary<unknown>): fc.Arbitrary<Fields> =>
  arb.map((v): Fields => [[name, v]]);

/** A body the operation would accept (most of the time), as ordered fields. */
export function validFields(fx: Fixture, op: Operation): fc.Arbitrary<Fields> {
  switch (op.id) {
    case "register":
      return fields(required("email", email), required("password", fc.constant(PASSWORD)));
    case "login":
      return fields(
        required("email", fc.oneof(fc.constantFrom(...fx.pool.emails), email)),
        required("password", fc.constantFrom(PASSWORD, "wrong password")),
      );
    case "adminCreateAccount":
      return fields(
        required("email", email),
        required("password", fc.constant(PASSWORD)),
        required("plan", fc.constantFrom(...PLANS)),
      );
    case "adminUpdateAccount":
      return required("plan", fc.constantFrom(...PLANS));
    case "createApiKey":
      return required("name", fc.string({ minLength: 1, maxLength: 20 }));
    case "createWebhook":
      return fields(
        required("url", webhookUrl),
        required("events", fc.subarray(EVENTS, { minLength: 1 })),
        optional("secret", fc.string({ minLength: 16, maxLength: 40 })),
      );
    case "updateWebhook":
      return fields(
        optional("url", webhookUrl),
        optional("events", fc.subarray(EVENTS, { minLength: 1 })),
        optional("secret", fc.oneof(fc.string({ minLength: 16, maxLength: 40 }), fc.constant(null))),
        optional("active", fc.boolean()),
      );
    case "createInbox":
      return fields(
        optional("localPart", fc.stringMatching(/^[a-z0-9]{1,12}$/)),
        optional("ttlSeconds", fc.integer({ min: 60, max: 604_800 })),
      );
    default:
      return fc.constant([]);
  }
}

/** One change to a valid body: drop, retype or duplicate a field, add a hostile key, or change the shape. */
type Mutation =
  | { kind: "keep" }
  | { kind: "drop"; at: number }
  | { kind: "set"; at: number; value: unknown }
  | { kind: "repeat"; at: number; value: unknown }
  | { kind: "add"; key: string; value: unknown }
  | { kind: "in-array" }
  | { kind: "nest"; value: unknown };

const mutation: fc.Arbitrary<Mutation> = fc.oneof(
  { weight: 1, arbitrary: fc.constant<Mutation>({ kind: "keep" }) },
  { weight: 2, arbitrary: fc.nat().map((at): Mutation => ({ kind: "drop", at })) },
  { weight: 6, arbitrary: fc.record({ at: fc.nat(), value: anyJson }).map((m): Mutation => ({ kind: "set", ...m })) },
  {
    weight: 1,
    arbitrary: fc.record({ at: fc.nat(), value: anyJson }).map((m): Mutation => ({ kind: "repeat", ...m })),
  },
  {
    weight: 2,
    arbitrary: fc.record({ key: keyArb, value: anyJson }).map((m): Mutation => ({ kind: "add", ...m })),
  },
  { weight: 1, arbitrary: fc.constant<Mutation>({ kind: "in-array" }) },
  { weight: 1, arbitrary: anyJson.map((value): Mutation => ({ kind: "nest", value })) },
);

function mutate(f: Fields, m: Mutation): unknown {
  const at = "at" in m && f.length > 0 ? m.at % f.length : -1;
  switch (m.kind) {
    case "keep":
      return new Entries(f);
    case "drop":
      return new Entries(f.filter((_, i) => i !== at));
    case "set":
      return new Entries(at < 0 ? [["value", m.value]] : f.map(([k, v], i) => [k, i === at ? m.value : v] as const));
    case "repeat":
      return new Entries(at < 0 ? f : [...f, [f[at]![0], m.value] as const]);
    case "add":
      return new Entries([...f, [m.key, m.value] as const]);
    case "in-array":
      return [new Entries(f)];
    case "nest":
      return new Entries(f.map(([k]) => [k, new Entries([[k, m.value]])] as const));
  }
}

/** A valid-looking body of the operation with one thing changed. */
export function mutatedBody(fx: Fixture, op: Operation): fc.Arbitrary<Body> {
  return fc.tuple(validFields(fx, op), mutation).map(([f, m]): Body => ({ kind: "json", value: mutate(f, m) }));
}

/** A valid-looking body of the operation (none for operations without one). */
export function validBody(fx: Fixture, op: Operation): fc.Arbitrary<Body> {
  if (!op.hasBody) return fc.constant<Body>({ kind: "none" });
  return validFields(fx, op).map((f): Body => ({ kind: "json", value: new Entries(f) }));
}

// ---------------------------------------------------------------- cases

export const principal: fc.Arbitrary<PrincipalName> = fc.constantFrom(...PRINCIPALS);

const SIGNED_IN: readonly PrincipalName[] = ["pro-session", "business-session", "pro-key", "business-key"];

/**
 * A principal for an operation, any of them but weighted towards those that
 * get past authentication: the admin token on `/admin`, paying plans on
 * `/api` (the credentials property covers refusals in depth).
 */
export function principalFor(op: Operation): fc.Arbitrary<PrincipalName> {
  if (op.template.startsWith("/admin/")) {
    return fc.oneof({ weight: 3, arbitrary: fc.constant<PrincipalName>("admin-token") }, {
      weight: 2,
      arbitrary: principal,
    });
  }
  if (op.template.startsWith("/api/")) {
    return fc.oneof({ weight: 3, arbitrary: fc.constantFrom(...SIGNED_IN) }, { weight: 2, arbitrary: principal });
  }
  return principal;
}

/** Time that passes before a request: usually none, sometimes past a rate window. */
export const waitMs: fc.Arbitrary<number> = fc.constantFrom(0, 0, 0, 1_000, 61_000);

/** The pieces of a case; `buildCase` turns them into one printable request. */
export interface Parts {
  op: Operation;
  method?: string;
  principal: PrincipalName;
  ids: IdSpec[];
  query?: string;
  body: Body;
  headers: Array<[string, string]>;
  authorization?: string | null;
  cookie?: CookiePart[];
  waitMs: number;
}

/** A printable case from its pieces. */
export function buildCase(fx: Fixture, p: Parts): Case {
  const method = p.method ?? p.op.method;
  let query = p.query ?? "";
  // The wait holds up to timeoutMs (default 30 s): the fuzzer gives it no more than the values it draws.
  if (p.op.id === "waitForMessage" && !/[?&]timeoutMs=/.test(query)) query += `${query ? "&" : "?"}timeoutMs=0`;
  const c: Case = {
    method,
    path: fillPath(fx, p.principal, p.op.template, p.ids) + query,
    principal: p.principal,
    headers: p.headers,
    // fetch cannot send a body with GET or HEAD.
    body: ["GET", "HEAD"].includes(normaliseMethod(method)) ? { kind: "none" } : p.body,
    waitMs: p.waitMs,
  };
  if (p.authorization !== undefined) c.authorization = p.authorization;
  if (p.cookie !== undefined) c.cookie = p.cookie;
  return printable(c);
}

/** Three existing ids, mostly the principal's own: enough for any template. */
export const poolIds: fc.Arbitrary<IdSpec[]> = fc.tuple(fc.nat(), fc.nat(), fc.nat(), fc.nat({ max: 3 })).map((
  [a, b, c, mine],
): IdSpec[] => mine > 0 ? [{ own: a }, { own: b }, { own: c }] : [{ pool: a }, { pool: b }, { pool: c }]);

/** Three hostile-or-valid path ids. */
export const anyIds: fc.Arbitrary<IdSpec[]> = fc.tuple(idSpec, idSpec, idSpec).map(([a, b, c]) => [a, b, c]);

/** Any operation of the document. */
export const anyOperation: fc.Arbitrary<Operation> = fc.constantFrom(...OPERATIONS);

/** Operations that take a JSON body. */
export const bodyOperations: fc.Arbitrary<Operation> = fc.constantFrom(...OPERATIONS.filter((o) => o.hasBody));

/** Operations with a path id. */
export const idOperations: fc.Arbitrary<Operation> = fc.constantFrom(
  ...OPERATIONS.filter((o) => o.pathParams.length > 0),
);

/** Operations that read a query (weighted 3:1 over the other GETs, which must ignore one). */
export const queryOperations: fc.Arbitrary<Operation> = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom(...OPERATIONS.filter((o) => o.queryParams.length > 0)) },
  { weight: 1, arbitrary: fc.constantFrom(...OPERATIONS.filter((o) => o.method === "GET")) },
);
