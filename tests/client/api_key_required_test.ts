/**
 * The typed client refuses an `apiKey` option without a key at construction
 * (`MissingApiKeyError`, "apiKey is required"), instead of sending no
 * credential and failing on the first call, or later with a TypeError on the
 * missing data. README's sign-up test, run as README says with INBOX_API_KEY
 * unset, fails with that message.
 */
import assert from "node:assert/strict";
import { createClient, MissingApiKeyError } from "../../src/client/mod.ts";

const ROOT = new URL("../../", import.meta.url);
const CLIENT = new URL("src/client/mod.ts", ROOT);
const BASE_URL = "http://127.0.0.1:9";

Deno.test("an apiKey option that is undefined, empty or blank is refused at construction", () => {
  for (const apiKey of [undefined, "", "   "]) {
    assert.throws(
      () => createClient({ baseUrl: BASE_URL, apiKey }),
      (err: unknown) => {
        assert.ok(err instanceof MissingApiKeyError, String(err));
        assert.ok(!(err instanceof TypeError));
        assert.equal(err.name, "MissingApiKeyError");
        assert.match(err.message, /^apiKey is required: /);
        assert.match(err.message, /INBOX_API_KEY/);
        return true;
      },
      JSON.stringify(apiKey),
    );
  }
});

Deno.test("a client without the apiKey option (session, operator) and one with a key are built as before", () => {
  assert.equal(createClient({ baseUrl: BASE_URL }).cookie, undefined);
  assert.equal(createClient({ baseUrl: BASE_URL, cookie: "session=abc" }).cookie, "session=abc");
  createClient({ baseUrl: BASE_URL, adminToken: "operator-token-0123456789" });
  createClient({ baseUrl: BASE_URL, apiKey: "isk_anything" });
});

/** The first TypeScript block of README's section `heading`. */
async function readmeExample(heading: string): Promise<string> {
  const readme = await Deno.readTextFile(new URL("README.md", ROOT));
  const section = readme.slice(readme.indexOf(`\n${heading}\n`));
  const block = /```ts\n([\s\S]*?)```/.exec(section)?.[1];
  assert.ok(block, `README has a ts block under ${heading}`);
  return block;
}

Deno.test("README's sign-up test with INBOX_API_KEY unset fails with 'apiKey is required'", async () => {
  const example = await readmeExample("## Testing a sign-up email");
  assert.match(example, /apiKey: Deno\.env\.get\("INBOX_API_KEY"\)/);
  // A project of its own, where the package name README imports maps to this checkout's client.
  const dir = await Deno.makeTempDir({ prefix: "inbox_signup_" });
  try {
    await Deno.writeTextFile(
      `${dir}/deno.json`,
      JSON.stringify({ imports: { "@inbox-service/server/client": CLIENT.href } }),
    );
    await Deno.writeTextFile(`${dir}/signup_test.ts`, example);
    const env = Deno.env.toObject();
    delete env.INBOX_API_KEY;
    // As README runs it, without type checking: signUp and enterCode are the reader's own.
    const out = await new Deno.Command("deno", {
      args: ["test", "-A", "--no-check", "signup_test.ts"],
      cwd: dir,
      env: { ...env, NO_COLOR: "1" },
      clearEnv: true,
      stdout: "piped",
      stderr: "piped",
    }).output();
    const text = new TextDecoder().decode(out.stdout) + new TextDecoder().decode(out.stderr);
    assert.equal(out.code, 1, text);
    assert.match(text, /MissingApiKeyError: apiKey is required: /, text);
    assert.doesNotMatch(text, /TypeError/, text);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
