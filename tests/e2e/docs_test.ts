/**
 * The API reference as a person sees it: headless Chromium loads /docs from
 * the real service with every request to another origin aborted (so it must
 * work offline: Scalar's bundle comes from /docs/scalar.js), the operations and
 * the webhook event payloads render, "Test Request" sends an operation's
 * example to the host and port that served the page (the service listens on a
 * random port, never the default 8000), and screenshots are saved to
 * tests/e2e/out/. The page runs within its Content-Security-Policy: no
 * violation is reported while it renders, and an injected script is refused.
 * Needs Debian's chromium (`apt-get install -y chromium`) at
 * /usr/bin/chromium, or CHROMIUM_PATH. Run with `deno task test:e2e`.
 */
import assert from "node:assert/strict";
import { openApiDocument } from "../../src/service/openapi_document.ts";
import { createTestDb } from "../_helpers/db.ts";
import { startApp } from "../_helpers/app.ts";
import { launchChromium, TIMEOUT_MS, watch } from "./_browser.ts";

const OUT = new URL("./out/", import.meta.url);

/** Sidebar groups (the tags of openapi.yaml) and operation summaries each must list. */
const GROUPS: Record<string, string[]> = {
  "API keys": ["Create an API key", "List API keys", "Revoke an API key"],
  Webhooks: ["List webhooks", "Create a webhook", "Update a webhook", "Rotate the signing secret", "Send a test event"],
  Deliveries: ["List deliveries", "Redeliver an event", "Recover failed deliveries"],
  Inboxes: ["Create an inbox", "List inboxes", "Delete an inbox"],
  Messages: ["Wait for a message", "List messages", "Get a message", "Get the raw message", "Download an attachment"],
  Events: ["List events", "Stream events"],
  Admin: ["Find an account by email (admin)", "Create an account (admin)"],
  Service: ["Liveness probe", "Readiness probe"],
};
/** The `webhooks` section of openapi.yaml: one entry per event type. */
const EVENTS = ["message.received", "inbox.created", "inbox.expired", "test", "webhook.disabled", "webhook.enabled"];

Deno.test("GET /docs renders the API reference offline in Chromium", async () => {
  const db = await createTestDb();
  const app = await startApp(db.sql);
  const browser = await launchChromium();
  try {
    const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
    page.setDefaultTimeout(TIMEOUT_MS);
    const origin = new URL(app.baseUrl).origin;
    const { served, blocked, failedOwn, pageErrors, cspViolations } = await watch(page, origin);
    const reported = (text: string) => cspViolations.some((v) => v.includes(text));

    const res = await page.goto(`${app.baseUrl}/docs`, { waitUntil: "domcontentloaded" });
    assert.equal(res?.status(), 200);
    const csp = (await res!.allHeaders())["content-security-policy"] ?? "";
    assert.match(csp, /default-src 'self'/);
    assert.match(csp, /frame-ancestors 'none'/);
    await page.getByText("Register an account").first().waitFor();
    assert.match(await page.locator("body").innerText(), /Inbox Service API/);

    // Open every group of the sidebar and check its operations are listed.
    for (const [group, summaries] of Object.entries(GROUPS)) {
      await page.getByRole("button", { name: `Open Group - ${group}` }).first().click();
      for (const summary of summaries) await page.getByText(summary, { exact: true }).first().waitFor();
    }
    for (const event of EVENTS) await page.getByText(event, { exact: true }).first().waitFor();
    await Deno.mkdir(OUT, { recursive: true });
    await page.screenshot({ path: new URL("docs.png", OUT).pathname });

    // The webhook event payloads: headers and the body schema of message.received.
    await page.getByText("message.received", { exact: true }).first().click();
    const section = page.locator('[id$="webhook/POST/messagereceived"]').first();
    await section.waitFor();
    const text = await section.innerText();
    for (const expected of ["X-Webhook-Signature", "webhook-signature", "MessageReceivedEvent", "createdAt"]) {
      assert.ok(text.includes(expected), `the message.received section shows ${expected}`);
    }
    await page.getByText('"messageId"').first().waitFor(); // the example payload
    await page.screenshot({ path: new URL("docs-webhook.png", OUT).pathname });

    // "Test Request": the server URL is relative, so the request goes to the origin that served
    // the page, with the operation's example body, which the service accepts.
    await page.getByText("Register an account", { exact: true }).first().click(); // the sidebar entry
    const register = page.locator('[id$="tag/auth/POST/api/auth/register"]').first();
    await register.getByRole("button", { name: /Test Request/ }).click();
    const answered = page.waitForResponse((r) =>
      r.request().method() === "POST" && new URL(r.url()).pathname === "/api/auth/register"
    );
    await page.getByRole("button", { name: /^Send/ }).first().click();
    const answer = await answered;
    assert.equal(new URL(answer.url()).origin, origin, "sent to the host and port that served /docs");
    const paths = openApiDocument.paths as Record<string, Record<string, Record<string, unknown>>>;
    const content = (paths["/api/auth/register"]!.post!.requestBody as Record<string, unknown>).content;
    const example = (content as Record<string, { example: unknown }>)["application/json"]!.example;
    assert.deepEqual(JSON.parse(answer.request().postData() ?? "null"), example, "the body is the example");
    assert.equal(answer.status(), 201, "the service accepts the example");
    await page.getByText("201 Created").first().waitFor();
    await page.screenshot({ path: new URL("docs-test-request.png", OUT).pathname });

    assert.ok(served.includes("/docs/scalar.js"), `Scalar's bundle comes from the service: ${served}`);
    assert.ok(served.includes("/openapi.json"), `the document comes from the service: ${served}`);
    assert.deepEqual(failedOwn, []);
    assert.deepEqual(pageErrors, []);
    assert.deepEqual(cspViolations, [], "the page runs entirely within its Content-Security-Policy");
    // And the policy holds: a script injected into the page (as an XSS would) does not run.
    const injected = await page.evaluate(`(() => {
      const script = document.createElement("script");
      script.textContent = "globalThis.injected = true";
      document.body.append(script);
      return globalThis.injected === true;
    })()`);
    assert.equal(injected, false, "an injected inline script ran");
    for (let i = 0; i < 20 && !reported("Executing inline script violates"); i++) await page.waitForTimeout(100);
    assert.ok(reported("Executing inline script violates"), `the refusal is reported: ${cspViolations.join("\n")}`);
    // Anything else was refused and the page rendered regardless.
    for (const url of blocked) assert.ok(!url.startsWith(origin), url);
  } finally {
    await browser.close();
    await app.close();
    await db.close();
  }
});
