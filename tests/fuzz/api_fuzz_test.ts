/**
 * Property-based fuzzing of every operation of openapi.yaml over real HTTP
 * against real PostgreSQL. For every generated request:
 * - no 5xx (but readyz's documented 503);
 * - the status is one the yaml documents for the operation reached (plus what
 *   middleware in front of it may answer; see tests/fuzz/_spec.ts);
 * - every 4xx body is exactly the error body, with a documented code;
 * - every 2xx body is JSON;
 * - a refused (4xx) request that could mutate changes no table.
 *
 * FUZZ_RUNS (default 60) sets runs per property; FUZZ_SEED replays a reported
 * seed (default fixed; `random` for a fresh one). Counterexamples print as
 * requests: method, path, principal, headers, body excerpt, status, answer.
 */
import fc from "npm:fast-check@4.10.2";
import assert from "node:assert/strict";
import {
  anyIds,
  anyOperation,
  authorizationArb,
  bodyOperations,
  buildCase,
  contentTypeHeaders,
  cookieArb,
  extraHeaders,
  idOperations,
  mutatedBody,
  poolIds,
  principalFor,
  queryArb,
  queryOperations,
  randomBody,
  validBody,
  waitMs,
} from "./_arbitraries.ts";
import {
  type Body,
  type Case,
  type Fixture,
  fuzzParams,
  type PrincipalName,
  printable,
  printTally,
  RUNS,
  startFixture,
  type Tally,
} from "./_harness.ts";
import { operation, OPERATIONS } from "./_spec.ts";

/** Runs `fn` with a fresh fixture, closing it whatever happens. */
async function withFixture(name: string, fn: (fx: Fixture, tally: Tally) => Promise<void>): Promise<void> {
  const fx = await startFixture();
  const tally: Tally = new Map();
  try {
    await fn(fx, tally);
  } finally {
    printTally(name, tally);
    await fx.close();
  }
}

/** Checks every case and reports all failures at once. */
async function checkAll(fx: Fixture, cases: Case[], tally: Tally): Promise<void> {
  const failures: string[] = [];
  for (const c of cases) {
    try {
      await fx.check(c, tally);
    } catch (err) {
      failures.push(err instanceof Error ? err.message : String(err));
    }
  }
  if (failures.length > 0) {
    assert.fail(`${failures.length} of ${cases.length} cases failed:\n\n${failures.join("\n\n")}`);
  }
}

/** A well-formed page cursor (src/shared/cursor.ts) holding the given position. */
function cursor(at: unknown, id: unknown): string {
  return btoa(JSON.stringify([at, id])).replaceAll("+", "-").replaceAll("/", "_").replace(/=+$/, "");
}

const get = (path: string): Case =>
  printable({ method: "GET", path, principal: "pro-session", headers: [], body: { kind: "none" }, waitMs: 0 });

/**
 * Shrunk counterexamples the properties found, kept as fixed cases: each
 * property replays its own first (fast-check `examples`), and each also runs
 * on its own below, so a regression names itself.
 */
const REGRESSIONS = {
  /**
   * Dates outside years 0001-9999 are valid JS dates (and a cursor can carry
   * them) but PostgreSQL refuses them: 22007, 22008, 22009 -> 500.
   */
  cursorDate: (fx: Fixture): Case[] => [
    get(`/api/inboxes?cursor=${cursor("-271821-04-20T00:00:00.000Z", "x")}`),
    get(`/api/inboxes?cursor=${cursor("-000001-01-01T00:00:00.000Z", "x")}`),
    get(`/api/inboxes/${fx.owned.pro.inboxIds[0]}/messages?cursor=${cursor("+010000-01-01T00:00:00.000Z", "x")}`),
    get(
      `/api/user-webhooks/${fx.owned.pro.webhookIds[0]}/deliveries?cursor=${cursor("0000-01-01T00:00:00.000Z", "1")}`,
    ),
  ],
  /** Nineteen digits pass the /^\d{1,19}$/ check but overflow bigint (22003 -> 500). */
  cursorSeq: (fx: Fixture): Case[] => [
    get(
      `/api/user-webhooks/${fx.owned.pro.webhookIds[0]}/deliveries?cursor=${
        cursor("2026-01-01T00:00:00.000Z", "9999999999999999999")
      }`,
    ),
  ],
  /** zod-openapi's media-type gate throws HTTPException(415), mapped to code BAD_REQUEST. */
  mediaTypeCode: (_fx: Fixture): Case[] => {
    const targets: Array<[string, PrincipalName]> = [
      ["/api/auth/register", "anonymous"],
      ["/api/inboxes", "free-session"],
      ["/admin/accounts", "admin-token"],
    ];
    return targets.map(([path, principal]) =>
      printable({
        method: "POST",
        path,
        principal,
        headers: [["content-type", "text/plain"]],
        body: { kind: "none" },
        waitMs: 0,
      })
    );
  },
};

Deno.test("fuzz: random JSON, invalid JSON, raw bytes and any content type at every operation", async () => {
  await withFixture("bodies", async (fx, tally) => {
    const cases = anyOperation.chain((op) =>
      fc.record({
        op: fc.constant(op),
        principal: principalFor(op),
        ids: poolIds,
        body: randomBody,
        headers: fc.tuple(contentTypeHeaders, extraHeaders).map(([a, b]) => [...a, ...b]),
        waitMs,
      })
    ).map((p) => buildCase(fx, p));
    await fc.assert(fc.asyncProperty(cases, (c) => fx.check(c, tally)), fuzzParams(REGRESSIONS.mediaTypeCode(fx)));
  });
});

Deno.test("fuzz: valid-looking bodies with one field dropped, retyped, repeated or polluted", async () => {
  await withFixture("mutated bodies", async (fx, tally) => {
    const cases = bodyOperations.chain((op) =>
      fc.record({
        op: fc.constant(op),
        principal: principalFor(op),
        ids: poolIds,
        body: mutatedBody(fx, op),
        headers: fc.constantFrom<Array<[string, string]>>(
          [["content-type", "application/json"]],
          [["content-type", "application/json; charset=utf-8"]],
        ),
        waitMs,
      })
    ).map((p) => buildCase(fx, p));
    await fc.assert(fc.asyncProperty(cases, (c) => fx.check(c, tally)), fuzzParams());
  });
});

Deno.test("fuzz: garbage, near-valid, foreign and huge credentials (authorization and cookie)", async () => {
  await withFixture("credentials", async (fx, tally) => {
    const cases = anyOperation.chain((op) =>
      fc.record({
        op: fc.constant(op),
        principal: principalFor(op),
        ids: poolIds,
        body: validBody(fx, op),
        headers: fc.constant<Array<[string, string]>>(op.hasBody ? [["content-type", "application/json"]] : []),
        authorization: fc.option(authorizationArb(fx), { nil: undefined }),
        cookie: fc.option(cookieArb, { nil: undefined }),
        waitMs,
      })
    ).map((p) => buildCase(fx, p));
    await fc.assert(fc.asyncProperty(cases, (c) => fx.check(c, tally)), fuzzParams());
  });
});

Deno.test("fuzz: hostile path ids (dot segments, %2F, %00, bad escapes, unicode, very long, near misses)", async () => {
  await withFixture("path ids", async (fx, tally) => {
    const cases = idOperations.chain((op) =>
      fc.record({
        op: fc.constant(op),
        principal: principalFor(op),
        ids: anyIds,
        body: validBody(fx, op),
        headers: fc.constant<Array<[string, string]>>(op.hasBody ? [["content-type", "application/json"]] : []),
        waitMs,
      })
    ).map((p) => buildCase(fx, p));
    await fc.assert(fc.asyncProperty(cases, (c) => fx.check(c, tally)), fuzzParams());
  });
});

Deno.test("fuzz: hostile query strings (limit, forged cursors, repeats, unknown params)", async () => {
  await withFixture("query strings", async (fx, tally) => {
    const cases = queryOperations.chain((op) =>
      fc.record({
        op: fc.constant(op),
        principal: principalFor(op),
        ids: poolIds,
        query: queryArb(fx),
        body: fc.constant<Body>({ kind: "none" }),
        headers: fc.constant<Array<[string, string]>>([]),
        waitMs,
      })
    ).map((p) => buildCase(fx, p));
    const examples = [...REGRESSIONS.cursorDate(fx), ...REGRESSIONS.cursorSeq(fx)];
    await fc.assert(fc.asyncProperty(cases, (c) => fx.check(c, tally)), fuzzParams(examples));
  });
});

Deno.test("fuzz: bursts on the rate-limited API key operations answer 429 with Retry-After and change nothing", async () => {
  await withFixture("api-key bursts", async (fx, tally) => {
    const apiKeyOps = fc.constantFrom(operation("createApiKey"), operation("listApiKeys"), operation("deleteApiKey"));
    // One account per burst (by session or by key), so its per-minute allowances run out.
    const accounts: Array<[PrincipalName, PrincipalName]> = [["pro-session", "pro-key"], [
      "business-session",
      "business-key",
    ]];
    const burst = fc.constantFrom(...accounts).chain((sameAccount) =>
      fc.array(
        apiKeyOps.chain((op) =>
          fc.record({
            op: fc.constant(op),
            principal: fc.constantFrom(...sameAccount),
            ids: poolIds,
            body: validBody(fx, op),
            headers: fc.constant<Array<[string, string]>>(op.hasBody ? [["content-type", "application/json"]] : []),
            waitMs: fc.constant(0),
          })
        ).map((p) => buildCase(fx, p)),
        { minLength: 10, maxLength: 60, size: "max" },
      )
    );
    // A burst averages 35 requests, so RUNS / 10 bursts send several times the requests of another property.
    await fc.assert(
      fc.asyncProperty(burst, async (requests) => {
        for (const c of requests) await fx.check(c, tally);
        // Past the window: the next burst starts with fresh allowances.
        fx.clock.advance(61_000);
      }),
      { ...fuzzParams(), numRuns: Math.max(1, Math.ceil(RUNS / 10)) },
    );
  });
});

/** Methods a known path does not serve (fetch upper-cases only the six standard names; `patch` stays lower). */
const METHODS = ["GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "PROPFIND", "QUERY", "patch", "FOO"];

Deno.test("fuzz: wrong methods on known paths answer 404 (Hono has no 405) or a middleware 4xx", async () => {
  await withFixture("wrong methods", async (fx, tally) => {
    const served = (template: string) =>
      new Set(OPERATIONS.filter((o) => o.template === template).map((o) => o.method));
    const cases = anyOperation.chain((op) =>
      fc.record({
        op: fc.constant(op),
        method: fc.constantFrom(...METHODS.filter((m) => !served(op.template).has(m))),
        principal: principalFor(op),
        ids: poolIds,
        body: fc.oneof(validBody(fx, operation("createInbox")), randomBody),
        headers: contentTypeHeaders,
        waitMs,
      })
    ).map((p) => buildCase(fx, p));
    await fc.assert(fc.asyncProperty(cases, (c) => fx.check(c, tally)), fuzzParams());
  });
});

Deno.test("regression: a page cursor whose date PostgreSQL cannot store is a 400, not a 500", async () => {
  await withFixture("regression: cursor date", (fx, tally) => checkAll(fx, REGRESSIONS.cursorDate(fx), tally));
});

Deno.test("regression: a delivery-log cursor whose sequence overflows bigint is a 400, not a 500", async () => {
  await withFixture("regression: cursor seq", (fx, tally) => checkAll(fx, REGRESSIONS.cursorSeq(fx), tally));
});

Deno.test("regression: a non-JSON content type on an empty body is 415 UNSUPPORTED_MEDIA_TYPE", async () => {
  await withFixture("regression: 415 code", (fx, tally) => checkAll(fx, REGRESSIONS.mediaTypeCode(fx), tally));
});

const EXPECTED_OPERATIONS = [
  "register",
  "login",
  "logout",
  "getMe",
  "createApiKey",
  "listApiKeys",
  "deleteApiKey",
  "listWebhooks",
  "createWebhook",
  "getWebhook",
  "updateWebhook",
  "deleteWebhook",
  "rotateWebhookSecret",
  "testWebhook",
  "listDeliveries",
  "redeliver",
  "recoverDeliveries",
  "createInbox",
  "listInboxes",
  "getInbox",
  "deleteInbox",
  "listMessages",
  "waitForMessage",
  "getMessage",
  "deleteMessage",
  "getRawMessage",
  "getAttachment",
  "listEvents",
  "streamEvents",
  "adminCreateAccount",
  "adminUpdateAccount",
  "health",
  "ready",
];

Deno.test("the fuzzed operations are those of openapi.yaml, and middleware statuses are all documented", () => {
  const ids = OPERATIONS.map((o) => o.id);
  for (const id of EXPECTED_OPERATIONS) assert.ok(ids.includes(id), `openapi.yaml lost ${id}`);
  for (const op of OPERATIONS) {
    for (const s of op.allowed) {
      assert.ok(op.documented.has(s), `${op.id}: middleware status ${s} is not in openapi.yaml`);
      assert.ok(s < 500 || (op.id === "ready" && s === 503), `${op.id}: ${s}`);
    }
  }
});
