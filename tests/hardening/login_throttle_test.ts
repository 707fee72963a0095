/**
 * Password guessing (design: "Security posture"): failed logins are throttled
 * per email and per client address, with lockouts that double; registrations
 * per client address. Over real HTTP, on real PostgreSQL, with a manual clock
 * to move through windows and lockouts.
 *
 * Before the throttle, 30 wrong passwords for one email got 30 plain 401s and
 * the right password worked straight after.
 */
import assert from "node:assert/strict";
import { newUser, type TestApp } from "../_helpers/app.ts";
import { startHarness, withService } from "../_helpers/harness.ts";
import { runSweeps } from "../../src/service/sweeps.ts";

const PASSWORD = "correct horse"; // newUser's password
const DAY = 86_400_000;

/** An app with `env` and a free user. */
function fixture(env: Record<string, string> = {}) {
  return startHarness({ env, user: "free" });
}

/** One login; returns the status, the error code (if any) and Retry-After. */
async function login(
  app: TestApp,
  email: string,
  password: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; code: string | undefined; retryAfter: string | null }> {
  const res = await app.request("/api/auth/login", { method: "POST", json: { email, password }, headers });
  const body = await res.json();
  return { status: res.status, code: body.code, retryAfter: res.headers.get("retry-after") };
}

async function wrongLogins(app: TestApp, email: string, n: number, headers: Record<string, string> = {}) {
  const out = [];
  for (let i = 0; i < n; i++) out.push(await login(app, email, `wrong password ${i}`, headers));
  return out;
}

function tally(results: { status: number }[]): Record<number, number> {
  const counts: Record<number, number> = {};
  for (const r of results) counts[r.status] = (counts[r.status] ?? 0) + 1;
  return counts;
}

Deno.test("30 wrong passwords: 10 x 401, then 429 RATE_LIMITED with Retry-After; the right password is refused until the lockout ends", async () => {
  const f = await fixture();
  try {
    const results = await wrongLogins(f.app, f.user.email, 30);
    console.log(`30 wrong passwords for one email: ${JSON.stringify(tally(results))}`);
    assert.deepEqual(results.slice(0, 10).map((r) => [r.status, r.code]), Array(10).fill([401, "INVALID_CREDENTIALS"]));
    for (const r of results.slice(10)) {
      assert.equal(r.status, 429);
      assert.equal(r.code, "RATE_LIMITED");
      // The clock does not move: the whole first lockout (LOGIN_LOCKOUT_SECONDS, 300) is ahead.
      assert.equal(r.retryAfter, "300");
    }

    const right = await login(f.app, f.user.email, PASSWORD);
    assert.deepEqual(right, { status: 429, code: "RATE_LIMITED", retryAfter: "300" }, "refused, unchecked");

    f.clock.advance(299_000);
    assert.equal((await login(f.app, f.user.email, PASSWORD)).retryAfter, "1");
    f.clock.advance(1_000);
    assert.equal((await login(f.app, f.user.email, PASSWORD)).status, 200, "the lockout is over");
  } finally {
    await f.close();
  }
});

Deno.test("each further lockout in a row doubles, up to LOGIN_LOCKOUT_MAX_SECONDS; a successful login ends the series", async () => {
  const f = await fixture();
  try {
    const lockouts: number[] = [];
    for (let burst = 0; burst < 7; burst++) {
      const results = await wrongLogins(f.app, f.user.email, 11);
      assert.deepEqual(results.slice(0, 10).map((r) => r.status), Array(10).fill(401), `burst ${burst}`);
      assert.equal(results[10]!.status, 429);
      const seconds = Number(results[10]!.retryAfter);
      lockouts.push(seconds);
      f.clock.advance(seconds * 1000);
    }
    console.log(`lockouts in a row (s): ${lockouts.join(", ")}`);
    assert.deepEqual(lockouts, [300, 600, 1200, 2400, 3600, 3600, 3600]);

    // The owner logs in between lockouts: the series and the count start again.
    assert.equal((await login(f.app, f.user.email, PASSWORD)).status, 200);
    const again = await wrongLogins(f.app, f.user.email, 11);
    assert.deepEqual(again.map((r) => r.status), [...Array(10).fill(401), 429]);
    assert.equal(again[10]!.retryAfter, "300");

    // Left alone, a series is forgotten a day after its last lockout ended (else this one would be 600 s).
    f.clock.advance(300_000 + DAY);
    const next = await wrongLogins(f.app, f.user.email, 11);
    assert.equal(next[10]!.retryAfter, "300");
    // ...and the minute sweep removes it then.
    f.clock.advance(300_000 + DAY + 1);
    await runSweeps(f.app.deps.sweeps, f.clock.now());
    const rows = await f.db.sql`SELECT count(*)::int AS n FROM rate_limit_lockouts`;
    assert.equal(rows[0]!.n, 0);
  } finally {
    await f.close();
  }
});

Deno.test("a successful login clears the email's failure count", async () => {
  const f = await fixture();
  try {
    assert.deepEqual(tally(await wrongLogins(f.app, f.user.email, 9)), { 401: 9 });
    assert.equal((await login(f.app, f.user.email, PASSWORD)).status, 200);
    // Without the reset the 10th failure below would already meet a lockout (9 + 10 > 10).
    const after = await wrongLogins(f.app, f.user.email, 11);
    assert.deepEqual(after.map((r) => r.status), [...Array(10).fill(401), 429]);
  } finally {
    await f.close();
  }
});

Deno.test("unknown emails are throttled exactly like known ones, and an email in any letter case is one bucket", async () => {
  const f = await fixture();
  try {
    const unknown = await wrongLogins(f.app, "nobody@example.com", 12);
    const known = await wrongLogins(f.app, f.user.email, 12);
    assert.deepEqual(unknown, known, "the answers do not tell which email has an account");
    assert.deepEqual(tally(unknown), { 401: 10, 429: 2 });

    const other = await newUser(f.app, "free");
    const upper = other.email.toUpperCase();
    const mixed = [];
    for (let i = 0; i < 10; i++) mixed.push(await login(f.app, i % 2 ? upper : other.email, `wrong password ${i}`));
    assert.deepEqual(tally(mixed), { 401: 10 });
    assert.equal((await login(f.app, upper, PASSWORD)).status, 429, "one bucket for every spelling");
  } finally {
    await f.close();
  }
});

Deno.test("parallel guesses cannot slip past the limit: 30 at once give exactly 10 x 401", async () => {
  const f = await fixture();
  try {
    const results = await Promise.all(
      [...Array(30).keys()].map((i) => login(f.app, f.user.email, `parallel guess ${i}`)),
    );
    console.log(`30 parallel wrong passwords: ${JSON.stringify(tally(results))}`);
    assert.deepEqual(tally(results), { 401: 10, 429: 20 });
  } finally {
    await f.close();
  }
});

Deno.test("per client address: failures over many emails lock the address, whatever the email, right password included", async () => {
  // A small address limit keeps the test short; the default is 100.
  const f = await fixture({ LOGIN_ADDRESS_MAX_FAILURES: "15" });
  try {
    const results = [];
    for (let i = 0; i < 14; i++) results.push(await login(f.app, `victim${i}@example.com`, "wrong password"));
    assert.deepEqual(tally(results), { 401: 14 }, "one failure per email: no email is near its own limit");
    // A success is no failure (else the 15th failure below would be refused), and logging in to
    // one's own account does not give the address its guesses back (else the 16th would be allowed).
    assert.equal((await login(f.app, f.user.email, PASSWORD)).status, 200);
    assert.equal((await login(f.app, "victim14@example.com", "wrong password")).status, 401);
    const fresh = await login(f.app, "victim15@example.com", "wrong password");
    assert.deepEqual(fresh, { status: 429, code: "RATE_LIMITED", retryAfter: "300" });
    assert.equal((await login(f.app, f.user.email, PASSWORD)).status, 429, "the address is locked for every email");
    f.clock.advance(300_000);
    assert.equal((await login(f.app, f.user.email, PASSWORD)).status, 200);
  } finally {
    await f.close();
  }
});

Deno.test("X-Forwarded-For is ignored by default, and names the client only behind a trusted proxy", async () => {
  const plain = await fixture({ LOGIN_ADDRESS_MAX_FAILURES: "12" });
  try {
    // A client cannot escape the address limit by inventing a new X-Forwarded-For each time.
    const results = [];
    for (let i = 0; i < 13; i++) {
      results.push(
        await login(plain.app, `x${i}@example.com`, "wrong password", { "x-forwarded-for": `198.51.100.${i}` }),
      );
    }
    assert.deepEqual(results.map((r) => r.status), [...Array(12).fill(401), 429]);
  } finally {
    await plain.close();
  }

  // Behind a proxy at 127.0.0.1, the client is the address the proxy appended.
  const proxied = await fixture({ LOGIN_ADDRESS_MAX_FAILURES: "12", TRUSTED_PROXIES: "127.0.0.1" });
  try {
    const a = { "x-forwarded-for": "192.0.2.77, 203.0.113.10" }; // the client forged the first entry
    const b = { "x-forwarded-for": "203.0.113.20" };
    const results = [];
    for (let i = 0; i < 13; i++) results.push(await login(proxied.app, `y${i}@example.com`, "wrong password", a));
    assert.deepEqual(results.map((r) => r.status), [...Array(12).fill(401), 429], "203.0.113.10 is locked");
    const forged = { "x-forwarded-for": "192.0.2.1, 203.0.113.10" };
    assert.equal(
      (await login(proxied.app, "z@example.com", "wrong password", forged)).status,
      429,
      "a forged entry is no way out",
    );
    assert.equal((await login(proxied.app, proxied.user.email, PASSWORD, b)).status, 200, "another client is not");
  } finally {
    await proxied.close();
  }
});

Deno.test("registration: 20 attempts per client address and hour, then 429 with Retry-After; taken emails count too", async () => {
  await withService({}, async ({ app, clock }) => {
    const statuses: number[] = [];
    for (let i = 0; i < 25; i++) {
      // Every fifth attempt is for an email already taken: it is an attempt all the same.
      const email = i % 5 === 4 ? "burst0@example.com" : `burst${i}@example.com`;
      const res = await app.request("/api/auth/register", { method: "POST", json: { email, password: PASSWORD } });
      statuses.push(res.status);
      if (res.status === 429) {
        assert.equal((await res.json()).code, "RATE_LIMITED");
        assert.equal(res.headers.get("retry-after"), "3600");
      } else await res.body?.cancel();
    }
    console.log(`25 registrations from one address: ${JSON.stringify(tally(statuses.map((status) => ({ status }))))}`);
    assert.deepEqual(statuses, [...Array(25).keys()].map((i) => i >= 20 ? 429 : i % 5 === 4 ? 400 : 201));

    // The limit comes before the body checks (429 -> 415 -> 400), like the per-minute limits.
    const notJson = await app.request("/api/auth/register", {
      method: "POST",
      body: "x",
      headers: { "content-type": "text/plain" },
    });
    assert.equal(notJson.status, 429);
    await notJson.body?.cancel();

    // The window slides: an hour after the first attempt, there is room again.
    clock.advance(3_600_000);
    const later = await app.request("/api/auth/register", {
      method: "POST",
      json: { email: "later@example.com", password: PASSWORD },
    });
    assert.equal(later.status, 201);
    await later.body?.cancel();
  });
});

Deno.test("a lockout started on one instance holds on another instance on the same database", async () => {
  await withService({}, async (h) => {
    const { app: one, clock } = h;
    const two = await h.startInstance();
    const user = await newUser(one, "free");
    const first = await wrongLogins(one, user.email, 11);
    assert.deepEqual(tally(first), { 401: 10, 429: 1 });
    assert.deepEqual(await login(two, user.email, PASSWORD), { status: 429, code: "RATE_LIMITED", retryAfter: "300" });
    clock.advance(300_000);
    assert.equal((await login(two, user.email, PASSWORD)).status, 200);

    // Registrations too: 19 more on one (newUser made the first), the 21st on two is refused.
    for (let i = 0; i < 19; i++) {
      const res = await one.request("/api/auth/register", {
        method: "POST",
        json: { email: `multi${i}@example.com`, password: PASSWORD },
      });
      assert.equal(res.status, 201);
      await res.body?.cancel();
    }
    const refused = await two.request("/api/auth/register", {
      method: "POST",
      json: { email: "multi-last@example.com", password: PASSWORD },
    });
    assert.equal(refused.status, 429);
    await refused.body?.cancel();
  });
});
