/**
 * README's "Rotating a secret" recipe, as it is written there: its receiver
 * (npm standardwebhooks, every secret it is given) runs as a process of its
 * own and takes real deliveries from the service, over HTTPS, before, during
 * and after a rotation; given a secret that was never the webhook's, it
 * refuses them.
 */
import assert from "node:assert/strict";
import { createWebhook } from "../_helpers/app.ts";
import { startHarness } from "../_helpers/harness.ts";
import { freePort } from "../_helpers/ports.ts";
import { sleep } from "../_helpers/wait.ts";

const ROOT = new URL("../../", import.meta.url);
const CERTS = new URL("tests/_helpers/certs/", ROOT);

/** The recipe's receiver: the fenced TypeScript block of README that starts with `// rotating-receiver.ts`. */
async function recipe(): Promise<string> {
  const readme = await Deno.readTextFile(new URL("docs/webhooks.md", ROOT));
  const block = [...readme.matchAll(/```ts\n([\s\S]*?)```/g)].map((m) => m[1]!).find((code) =>
    code.startsWith("// rotating-receiver.ts")
  );
  assert.ok(block, "README has the rotating receiver");
  return block;
}

/** The receiver, run as README says, from a folder holding it and the certificate for `localhost`. */
async function runReceiver(dir: string, port: number, secrets: string[]) {
  const child = new Deno.Command("deno", {
    args: ["run", "--allow-net", "--allow-read", "--allow-env", "--no-lock", "--no-config", "rotating-receiver.ts"],
    cwd: dir,
    env: { INBOX_WEBHOOK_SECRETS: secrets.join(","), PORT: String(port), NO_COLOR: "1" },
    stdout: "piped",
    stderr: "null",
  }).spawn();
  const lines: string[] = [];
  void child.stdout.pipeThrough(new TextDecoderStream()).pipeTo(
    new WritableStream({ write: (chunk) => void lines.push(...chunk.split("\n").filter((l) => l !== "")) }),
  ).catch(() => {});
  // Listening once a TCP connection is accepted.
  for (let i = 0; i < 200; i++) {
    const conn = await Deno.connect({ hostname: "127.0.0.1", port }).catch(() => undefined);
    if (conn) {
      conn.close();
      break;
    }
    await sleep(50);
  }
  return {
    lines,
    async stop() {
      child.kill("SIGKILL");
      await child.status;
    },
  };
}

Deno.test("README's rotating receiver accepts real deliveries with either secret during the overlap", async () => {
  const dir = await Deno.makeTempDir({ prefix: "rotation-recipe-" });
  // The wall clock: standardwebhooks checks webhook-timestamp against the real time.
  const h = await startHarness({ receiver: true, user: "pro", systemClock: true });
  try {
    await Deno.writeTextFile(`${dir}/rotating-receiver.ts`, await recipe());
    await Deno.copyFile(new URL("receiver.pem", CERTS), `${dir}/localhost.pem`);
    await Deno.copyFile(new URL("receiver.key", CERTS), `${dir}/localhost-key.pem`);
    const port = freePort();
    const { app, user } = h;
    const OLD = "the-secret-before-rotation-0123";
    const id = await createWebhook(app, user, `https://localhost:${port}/hooks`, ["inbox.created"], OLD);

    /** One event delivered to the running receiver; the status it answered. */
    const deliver = async (): Promise<number> => {
      const now = new Date();
      const eventId = await app.deps.outbox.transaction((_tx, emit) =>
        emit(
          user.id,
          "inbox.created",
          { inboxId: "inb_r", address: "r@inbox.localhost", expiresAt: now.toISOString() },
          now,
        )
      );
      await app.deps.deliveries.queue.drain();
      const [row] = await h.db.sql<{ responseStatus: number | null; error: string | null }[]>`
        SELECT response_status, error FROM deliveries WHERE event_id = ${eventId} AND attempt = 1`;
      assert.notEqual(row!.responseStatus, null, `the receiver answered: ${row!.error}`);
      return row!.responseStatus!;
    };
    const withSecrets = async (secrets: string[], check: (lines: string[]) => Promise<void>) => {
      const receiver = await runReceiver(dir, port, secrets);
      try {
        await check(receiver.lines);
      } finally {
        await receiver.stop();
      }
    };

    await withSecrets([OLD], async () => assert.equal(await deliver(), 200, "before the rotation"));
    const res = await app.request(`/api/user-webhooks/${id}/rotate-secret`, {
      method: "POST",
      json: {},
      cookie: user.cookie,
    });
    const { secret: NEW } = await res.json() as { secret: string };
    await withSecrets(
      [OLD],
      async () => assert.equal(await deliver(), 200, "the old secret alone, during the overlap"),
    );
    await withSecrets([NEW, OLD], async (lines) => {
      assert.equal(await deliver(), 200, "both");
      assert.match(lines.join("\n"), /inbox\.created evt_/, "the receiver logged the event");
    });
    await withSecrets([NEW], async () => assert.equal(await deliver(), 200, "the new secret alone"));
    await withSecrets(["never-this-webhooks-secret-0123"], async () => assert.equal(await deliver(), 400));

    // The overlap ends (a PATCH of the secret ends it at once): the old secret alone no longer verifies.
    const patch = await app.request(`/api/user-webhooks/${id}`, {
      method: "PATCH",
      json: { secret: NEW },
      cookie: user.cookie,
    });
    assert.equal(patch.status, 200);
    await patch.body?.cancel();
    await withSecrets([OLD], async () => assert.equal(await deliver(), 400, "after the overlap"));
    await withSecrets([NEW, OLD], async () => assert.equal(await deliver(), 200));
  } finally {
    await h.close();
    await Deno.remove(dir, { recursive: true });
  }
});
