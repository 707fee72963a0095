/**
 * The caps counted over a claim's rows (`fitCaps`), without a database: the
 * rows are taken in their order while every count stays within its cap,
 * counted over the exchanges under way and the rows taken before.
 */
import assert from "node:assert/strict";
import { CapCount, type Caps, type Exchange, fitCaps } from "../../src/deliveries/caps.ts";

const CAPS: Caps = { perEvent: 3, perWebhook: 16, perAccount: 64, slots: 128 };

function row(n: number, eventId: string, webhookId: string, accountId = "a"): Exchange & { n: number } {
  return { n, eventId, webhookId, accountId };
}

Deno.test("one event to 10 webhooks: 3 taken, the first 3, and none while its 3 exchanges run", () => {
  const rows = Array.from({ length: 10 }, (_, i) => row(i, "e1", `w${i}`));
  assert.deepEqual(fitCaps(rows, [], CAPS).map((r) => r.n), [0, 1, 2]);
  assert.deepEqual(fitCaps(rows, rows.slice(0, 3), CAPS), []);
  assert.deepEqual(fitCaps(rows.slice(3), rows.slice(1, 3), CAPS).map((r) => r.n), [3], "one ended: one more");
});

Deno.test("20 events to one webhook: 16 taken, oldest first; a row a cap leaves does not stop a later one", () => {
  const rows = Array.from({ length: 20 }, (_, i) => row(i, `e${i}`, "w1"));
  assert.deepEqual(fitCaps(rows, [], CAPS).map((r) => r.n), [...Array(16).keys()]);
  // A second webhook's row behind the first's backlog is taken though the first is full.
  const mixed = [...rows, row(20, "e20", "w2")];
  assert.deepEqual(fitCaps(mixed, [], CAPS).map((r) => r.n).slice(-2), [15, 20]);
});

Deno.test("an account alone gets half of the slots, another claim's account what the first leaves", () => {
  const caps = { ...CAPS, perWebhook: 1_000, slots: 20 };
  const rows = Array.from({ length: 30 }, (_, i) => row(i, `e${i}`, "w1", "a"));
  assert.equal(fitCaps(rows, [], caps).length, 10, "half of 20");
  const running = Array.from({ length: 10 }, (_, i) => row(100 + i, `x${i}`, "v1", "b"));
  assert.equal(fitCaps(rows, running, caps).length, 5, "half of what b's 10 leave");
  const two = [...rows.slice(0, 10), ...Array.from({ length: 10 }, (_, i) => row(50 + i, `f${i}`, "v2", "c"))];
  const fit = fitCaps(two, [], caps);
  assert.equal(fit.filter((r) => r.accountId === "a").length, 6, "a third of 20 each, two accounts in the claim");
  assert.equal(fit.filter((r) => r.accountId === "c").length, 6);
  assert.equal(fitCaps(rows, [], { ...caps, perAccount: 4 }).length, 4, "never more than perAccount");
  const crowded = Array.from({ length: 40 }, (_, i) => row(200 + i, `y${i}`, "v3", "d"));
  assert.equal(fitCaps(rows, crowded, caps).length, 1, "never less than one");
});

Deno.test("a count stays within every cap at once, whatever the order of the rows", () => {
  const caps = { perEvent: 2, perWebhook: 3, perAccount: 5, slots: 100 };
  let seed = 7;
  const next = (n: number) => (seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) % n;
  for (let round = 0; round < 50; round++) {
    const rows = Array.from({ length: 40 }, (_, i) => row(i, `e${next(6)}`, `w${next(4)}`, `a${next(3)}`));
    const flying = Array.from({ length: next(6) }, (_, i) => row(100 + i, `e${next(6)}`, `w${next(4)}`, `a${next(3)}`));
    const count = new CapCount(flying);
    const fit = fitCaps(rows, flying, caps);
    for (const r of fit) count.add(r);
    const groups = (key: keyof Exchange) => Map.groupBy([...flying, ...fit], (r) => r[key]);
    for (const [eventId, g] of groups("eventId")) {
      const before = flying.filter((f) => f.eventId === eventId).length;
      assert.ok(g.length <= Math.max(caps.perEvent, before), `event ${eventId}`);
    }
    for (const [webhookId, g] of groups("webhookId")) {
      const before = flying.filter((f) => f.webhookId === webhookId).length;
      assert.ok(g.length <= Math.max(caps.perWebhook, before), `webhook ${webhookId}`);
    }
    for (const [accountId, g] of groups("accountId")) {
      const before = flying.filter((f) => f.accountId === accountId).length;
      assert.ok(g.length <= Math.max(caps.perAccount, before), `account ${accountId}`);
    }
    // Greedy: every row left would break a cap counted over what was taken.
    for (const r of rows.filter((r) => !fit.includes(r))) {
      const full = !count.eventAndWebhookFit(r, caps) || count.account(r.accountId) >= caps.perAccount ||
        count.account(r.accountId) >=
          new CapCount(flying).share(r.accountId, new Set(rows.map((x) => x.accountId)).size, caps);
      assert.ok(full, `row ${r.n} was left with room for it`);
    }
  }
});

Deno.test("a count taken back is as if never added: the caps and the share see the room again", () => {
  const caps = { ...CAPS, slots: 10 };
  const a = row(0, "e1", "w1", "a");
  const count = new CapCount([row(1, "e1", "w1", "a"), row(2, "e1", "w2", "a"), row(3, "e2", "w3", "b")]);
  count.add(a);
  assert.equal(count.eventAndWebhookFit(row(4, "e1", "w9"), caps), false, "e1 at 3");
  assert.equal(count.account("a"), 3);
  assert.equal(count.share("b", 1, caps), 3, "(10 - 3) / 2");
  count.remove(a);
  assert.equal(count.eventAndWebhookFit(row(4, "e1", "w9"), caps), true);
  assert.equal(count.account("a"), 2);
  assert.equal(count.share("b", 1, caps), 4, "(10 - 2) / 2");
});
