/**
 * The web UI as a person uses it, in headless Chromium against the real
 * service (SMTP listener, delivery queue, a real HTTPS receiver), with every
 * request to another origin aborted and recorded (tests/e2e/_browser.ts).
 *
 * It proves: a page without a session goes to sign-in, and signing in comes
 * back; inboxes are created, copied, counted down and deleted; a mail sent
 * over SMTP appears on an open inbox page within 1 s without a reload, with
 * the tagged address it was sent to; a mail's `<script>`, `on...` handlers and
 * `javascript:` links do not run; its remote images are not requested until
 * "Show images", and are after; a webhook is created, tested (the result on
 * the page), delivers into its log (request and response bodies), is
 * redelivered, edited, paused and deleted; a key is created with scopes, an
 * inbox and an expiry, shown once (not after a reload), and revoked; the
 * event log pages on; and over all of it, no page error, no console error,
 * no CSP violation of the UI's own pages, no request to another origin but
 * the images asked for, and no script request to a path openapi.yaml does
 * not document. Screenshots go to tests/e2e/out/ (git-ignored).
 */
import assert from "node:assert/strict";
import type { Page } from "npm:playwright-core@1.65.1";
import { startHarness } from "../_helpers/harness.ts";
import { documentedOperation } from "../_helpers/documented.ts";
import { sendMail } from "../messages/_support.ts";
import { launchChromium, TIMEOUT_MS, watch } from "./_browser.ts";

const OUT = new URL("./out/", import.meta.url);
const DOMAIN = "inbox.localhost";
/** The remote image of the mail: never requested until asked for. */
const REMOTE_IMAGE = "https://images.example/x.png";
/** Every origin the mail below names: what the frame's sandbox and policy refuse is reported about these. */
const MAIL_ORIGINS = ["https://images.example/", "https://styles.example/", "https://frames.example/"];

/**
 * A mail that tries everything a mail's HTML could run, each attempt posting to
 * the page that holds the frame if it ran (postMessage reaches any origin, the
 * opaque one of the sandbox included) and marking itself in the frame.
 */
const HOSTILE_HTML = `<html><head><title>mail</title>
<script>parent.postMessage("script ran", "*"); parent.document.title = "pwned";</script></head>
<body onload="parent.postMessage('body onload ran', '*')">
<p id="marker">no script ran</p>
<script>document.getElementById("marker").textContent = "script ran"; globalThis.mailScriptRan = true;</script>
<img src="data:," onerror="parent.postMessage('onerror ran', '*'); this.alt = 'onerror ran'" alt="broken">
<svg onload="parent.postMessage('svg onload ran', '*')"><rect width="1" height="1"/></svg>
<a id="js-link" href="javascript:parent.postMessage('javascript: ran', '*')">a javascript: link</a>
<img src="${REMOTE_IMAGE}" alt="remote image">
<div style="background-image: url(https://images.example/background.png); color: rgb(200, 0, 0)" id="styled">styled</div>
<link rel="stylesheet" href="https://styles.example/mail.css">
<iframe src="https://frames.example/"></iframe>
<p>Your code is <b>739201</b>. <a href="https://example.com/verify?token=abc">Verify your email</a></p>
</body></html>`;

/** The page's `getComputedStyle`, which the test evaluates there (Deno's types have no DOM). */
type Styles = { getComputedStyle(element: unknown): { color: string } };

/** Reloads until `selector` shows, or fails after `timeoutMs` (deliveries are asynchronous). */
async function reloadUntil(page: Page, selector: string, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await page.locator(selector).count())) {
    assert.ok(Date.now() < deadline, `${selector} did not show within ${timeoutMs} ms`);
    await page.waitForTimeout(200);
    await page.reload();
  }
}

Deno.test("the web UI in Chromium", async (t) => {
  const h = await startHarness({ receiver: true, smtp: true, user: "pro", systemClock: true, startDeliveries: true });
  const { app, user, receiver } = h;
  const origin = new URL(app.baseUrl).origin;
  const browser = await launchChromium();
  await Deno.mkdir(OUT, { recursive: true });
  const shot = (page: Page, name: string) => page.screenshot({ path: new URL(`ui-${name}.png`, OUT).pathname });
  try {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    await context.grantPermissions(["clipboard-read", "clipboard-write"], { origin });
    const page = await context.newPage();
    page.setDefaultTimeout(TIMEOUT_MS);
    page.on("dialog", (dialog) => void dialog.accept());
    const w = await watch(page, origin);
    // What the mail's frame manages to post to the page (nothing, if no script of the mail runs).
    await page.addInitScript(`globalThis.framePosts = [];
      addEventListener("message", (e) => globalThis.framePosts.push(String(e.data)));`);
    const clipboard = () => page.evaluate("navigator.clipboard.readText()");
    const api = (path: string, init: RequestInit & { json?: unknown; auth?: string } = {}) =>
      app.request(path, { cookie: user.cookie, ...init });
    let inboxId = "";

    await t.step("a page without a session goes to sign-in; signing in comes back to it", async () => {
      await page.goto(`${app.baseUrl}/`);
      assert.equal(new URL(page.url()).pathname, "/ui/login");
      await page.goto(`${app.baseUrl}/ui/inboxes`);
      assert.equal(new URL(page.url()).pathname, "/ui/login");
      assert.equal(new URL(page.url()).searchParams.get("next"), "/ui/inboxes");
      await page.getByLabel("Email").fill(user.email);
      await page.getByLabel("Password").fill("correct horse");
      await shot(page, "sign-in");
      await page.getByRole("button", { name: "Sign in" }).click();
      await page.waitForURL(`${app.baseUrl}/ui/inboxes`);
      await page.getByRole("heading", { name: "Inboxes" }).waitFor();
    });

    await t.step("inboxes: create with a local part, copy the address, count down, delete", async () => {
      await page.getByLabel("Local part").fill("signup");
      await page.getByLabel("Lifetime").selectOption("86400");
      await page.getByRole("button", { name: "Create inbox" }).click();
      await page.waitForURL(/\/ui\/inboxes\/inb_/);
      inboxId = decodeURIComponent(new URL(page.url()).pathname.split("/").at(-1)!);
      const created = await (await api(`/api/inboxes/${inboxId}`)).json();
      assert.equal(created.address, `signup@${DOMAIN}`);
      const lifetime = Date.parse(created.expiresAt) - Date.parse(created.createdAt);
      assert.equal(lifetime, 86_400_000, "the lifetime chosen");

      const other = await (await api("/api/inboxes", { method: "POST", json: { localPart: "throwaway" } })).json();
      await page.goto(`${app.baseUrl}/ui/inboxes`);
      const row = page.locator(`tr[data-inbox-id="${inboxId}"]`);
      await row.getByRole("button", { name: "Copy" }).click();
      assert.equal(await clipboard(), `signup@${DOMAIN}`);
      const countdown = row.locator("time[data-countdown]");
      const before = await countdown.textContent();
      assert.match(before ?? "", /^in 2[34]h \d\dm$/);
      const otherCountdown = page.locator(`tr[data-inbox-id="${other.id}"] time[data-countdown]`);
      const first = await otherCountdown.textContent();
      assert.match(first ?? "", /^in (59m|1h 00m)/);
      // It ticks: a page that is left open shows the time left, not the time left when it was loaded.
      const deadline = Date.now() + 2500;
      while ((await otherCountdown.textContent()) === first) {
        assert.ok(Date.now() < deadline, "the countdown ticks");
        await page.waitForTimeout(100);
      }
      await shot(page, "inboxes");
      await page.locator(`tr[data-inbox-id="${other.id}"]`).getByRole("button", { name: "Delete" }).click();
      await page.locator(`tr[data-inbox-id="${other.id}"]`).waitFor({ state: "detached" });
      assert.equal((await api(`/api/inboxes/${other.id}`)).status, 404);
    });

    await t.step("a mail sent over SMTP appears on the open inbox page within 1 s, without a reload", async () => {
      await page.goto(`${app.baseUrl}/ui/inboxes/${inboxId}`);
      await page.locator('tbody[data-live="open"]').waitFor({ state: "attached" });
      let navigations = 0;
      page.on("framenavigated", (frame) => void (frame === page.mainFrame() && navigations++));
      await page.evaluate(() => (globalThis as Record<string, unknown>).sameDocument = true);
      await sendMail(h.smtp.port, { to: `signup+run-42@${DOMAIN}`, subject: "Welcome aboard", text: "Hello" });
      const acknowledged = performance.now();
      const row = page.locator("tr[data-message-id]", { hasText: "Welcome aboard" });
      await row.waitFor({ timeout: 1000 });
      const ms = performance.now() - acknowledged;
      assert.ok(ms < 1000, `shown ${ms} ms after the 250`);
      assert.equal(navigations, 0, "no navigation");
      assert.equal(await page.evaluate(() => (globalThis as Record<string, unknown>).sameDocument), true, "no reload");
      assert.equal(await row.locator("td").nth(2).textContent(), `signup+run-42@${DOMAIN}`, "the tagged address");
      assert.match(await row.locator("td").nth(1).textContent() ?? "", /sender@example\.com/);
      // A second one lands above it; mail of another inbox does not show here.
      await api("/api/inboxes", { method: "POST", json: { localPart: "elsewhere" } });
      await sendMail(h.smtp.port, { to: `elsewhere@${DOMAIN}`, subject: "Not for this inbox", text: "x" });
      await sendMail(h.smtp.port, { to: `signup@${DOMAIN}`, subject: "Second", text: "Hello again" });
      await page.locator("tr[data-message-id]", { hasText: "Second" }).waitFor({ timeout: 1000 });
      assert.deepEqual(
        await page.locator("tr[data-message-id] td:first-child").allTextContents(),
        ["Second", "Welcome aboard"],
      );
      await shot(page, "inbox");
    });

    await t.step("a mail's scripts, on... handlers and javascript: links do not run", async () => {
      await sendMail(h.smtp.port, { to: `signup@${DOMAIN}`, subject: "Hostile", html: HOSTILE_HTML });
      await page.locator("tr[data-message-id] a", { hasText: "Hostile" }).click();
      await page.waitForURL(/\/messages\/msg_/);
      const frameElement = page.locator("iframe");
      const sandbox = (await frameElement.getAttribute("sandbox")) ?? "";
      assert.ok(!/allow-scripts|allow-same-origin/.test(sandbox), sandbox);
      const frame = page.frameLocator("iframe");
      await frame.locator("#marker").waitFor();
      await frame.locator("#js-link").click();
      await page.waitForTimeout(500);
      assert.equal(await frame.locator("#marker").textContent(), "no script ran");
      assert.equal(await frame.locator("img[alt]").first().getAttribute("alt"), "broken", "no onerror ran");
      assert.deepEqual(await page.evaluate(() => (globalThis as Record<string, unknown>).framePosts), []);
      assert.equal(await page.title(), "Hostile · Inbox Service", "the page's title is its own");
      assert.equal(await page.evaluate(() => "mailScriptRan" in globalThis), false);
      // The frame is of an opaque origin, and Chromium says why the mail's scripts were refused.
      const mailFrame = page.frames().find((f) => f.url() === "about:srcdoc");
      assert.ok(mailFrame);
      assert.equal(await mailFrame.evaluate(() => origin), "null");
      assert.equal(await mailFrame.evaluate(() => "mailScriptRan" in globalThis), false);
      assert.ok(
        w.consoleErrors.some((e) => e.url === "about:srcdoc" && /Blocked script execution/.test(e.text)),
        JSON.stringify(w.consoleErrors),
      );
      // The mail's inline styles apply (the frame allows them); the codes and links are read from it.
      assert.equal(
        await frame.locator("#styled").evaluate((e) => (globalThis as unknown as Styles).getComputedStyle(e).color),
        "rgb(200, 0, 0)",
      );
      await page.getByText("739201", { exact: true }).waitFor();
      await page.locator(".codes").getByRole("button", { name: "Copy" }).click();
      assert.equal(await clipboard(), "739201");
      await page.locator(".links").getByRole("button", { name: "Copy" }).click();
      assert.equal(await clipboard(), "https://example.com/verify?token=abc");
    });

    await t.step("a remote image is not requested until Show images, and is after", async () => {
      assert.equal(w.blocked.length, 0, `nothing was asked of another origin: ${w.blocked}`);
      await shot(page, "message");
      await page.getByRole("link", { name: "Show images" }).click();
      await page.waitForURL(/images=shown/);
      const deadline = Date.now() + 5000;
      while (!w.blocked.includes(REMOTE_IMAGE) && Date.now() < deadline) await page.waitForTimeout(50);
      assert.ok(w.blocked.includes(REMOTE_IMAGE), `requested (and aborted) once asked: ${w.blocked}`);
      assert.ok(w.blocked.every((url) => url.startsWith("https://images.example/")), `only images: ${w.blocked}`);
      // Still nothing else: no stylesheet, no frame, no script.
      await page.getByRole("link", { name: "Block them again" }).waitFor();
    });

    await t.step("raw and attachment downloads are the API's URLs", async () => {
      await sendMail(h.smtp.port, {
        to: `signup@${DOMAIN}`,
        subject: "With a file",
        text: "See the file",
        attachments: [{ filename: "report.txt", content: "hello file", contentType: "text/plain" }],
      });
      await page.goto(`${app.baseUrl}/ui/inboxes/${inboxId}`);
      await page.locator("tr[data-message-id] a", { hasText: "With a file" }).click();
      const [attachment] = await Promise.all([
        page.waitForEvent("download"),
        page.getByRole("link", { name: "report.txt" }).click(),
      ]);
      assert.match(
        new URL(attachment.url()).pathname,
        /^\/api\/inboxes\/inb_\w+\/messages\/msg_\w+\/attachments\/att_\w+$/,
      );
      assert.equal(await Deno.readTextFile(await attachment.path()), "hello file");
      const [raw] = await Promise.all([
        page.waitForEvent("download"),
        page.getByRole("link", { name: /Download raw/ }).click(),
      ]);
      assert.match(new URL(raw.url()).pathname, /\/raw$/);
      assert.match(await Deno.readTextFile(await raw.path()), /^[\s\S]*Subject: With a file/);
    });

    await t.step("webhooks: create, test (result shown), delivery log, redeliver, edit, pause, delete", async () => {
      await page.goto(`${app.baseUrl}/ui/webhooks`);
      await page.getByLabel("URL").fill(receiver.url("/hook"));
      await page.getByLabel("inbox.created").check();
      await page.getByLabel(/Signing secret/).fill("a-secret-of-twenty-chars");
      await page.getByRole("button", { name: "Create webhook" }).click();
      await page.waitForURL(/\/ui\/webhooks\/wh_/);
      const webhookId = decodeURIComponent(new URL(page.url()).pathname.split("/").at(-1)!);
      const created = await (await api(`/api/user-webhooks/${webhookId}`)).json();
      assert.deepEqual(created.events.toSorted(), ["inbox.created", "message.received"]);

      await page.getByRole("button", { name: "Send test event" }).click();
      const result = page.locator("#test-result");
      await result.waitFor({ state: "visible" });
      assert.equal(await result.locator('[data-field="success"]').textContent(), "delivered");
      assert.equal(await result.locator('[data-field="responseStatus"]').textContent(), "200");
      assert.equal(await result.locator('[data-field="responseBody"]').textContent(), "ok");
      const [test] = await receiver.waitFor(1);
      assert.equal(JSON.parse(test!.body).type, "test");
      await shot(page, "webhook-test");

      // An event it subscribes to: a delivery in its log, with the bodies both ways.
      const hooked = await (await api("/api/inboxes", { method: "POST", json: { localPart: "hooked" } })).json();
      await reloadUntil(page, "details.delivery .badge.succeeded");
      const entry = page.locator("details.delivery").first();
      await entry.locator("summary").click();
      const requestBody = JSON.parse(await entry.locator("[data-request-body]").textContent() ?? "");
      assert.equal(requestBody.type, "inbox.created");
      assert.equal(requestBody.data.address, hooked.address);
      assert.equal(await entry.locator("[data-response-body]").textContent(), "ok");
      await shot(page, "webhook-log");

      await entry.getByRole("button", { name: "Redeliver" }).click();
      await receiver.waitFor(3);
      await reloadUntil(page, `details.delivery:nth-of-type(2) .badge.succeeded`);
      const log = await (await api(`/api/user-webhooks/${webhookId}/deliveries`)).json();
      assert.equal(log.data.length, 2);
      assert.equal(log.data[0].eventId, log.data[1].eventId, "the same event again");

      // Edit: URL, events and secret through the form; only what changed is sent (`active` would reset the
      // failure count).
      await page.getByLabel("URL").fill(receiver.url("/hook-2"));
      await page.getByLabel("inbox.created").uncheck();
      await page.getByLabel(/New signing secret/).fill("another-secret-of-twenty");
      const [patch] = await Promise.all([
        page.waitForRequest((r) => r.method() === "PATCH"),
        page.getByRole("button", { name: "Save" }).click(),
      ]);
      assert.deepEqual(patch.postDataJSON(), {
        url: receiver.url("/hook-2"),
        events: ["message.received"],
        secret: "another-secret-of-twenty",
      });
      await page.locator("h1", { hasText: "/hook-2" }).waitFor();
      const edited = await (await api(`/api/user-webhooks/${webhookId}`)).json();
      assert.deepEqual([edited.url, edited.events], [receiver.url("/hook-2"), ["message.received"]]);

      await page.getByRole("button", { name: "Pause" }).click();
      await page.getByRole("button", { name: "Resume" }).waitFor();
      assert.equal(await page.locator("[data-webhook-status]").textContent(), "paused");
      assert.equal((await (await api(`/api/user-webhooks/${webhookId}`)).json()).active, false);

      await page.getByRole("button", { name: "Delete" }).click();
      await page.waitForURL(`${app.baseUrl}/ui/webhooks`);
      assert.equal((await api(`/api/user-webhooks/${webhookId}`)).status, 404);
    });

    await t.step("API keys: created with scopes, one inbox and an expiry, shown once, revoked", async () => {
      await page.goto(`${app.baseUrl}/ui/api-keys`);
      await page.getByLabel("Name").fill("agent");
      for (const scope of ["inboxes:write", "webhooks:read", "webhooks:write", "events:read"]) {
        await page.getByLabel(scope).uncheck();
      }
      await page.getByLabel(`signup@${DOMAIN}`).check();
      await page.getByLabel("Expires").selectOption({ label: "in 1 hour" });
      await page.getByRole("button", { name: "Create key" }).click();
      const shown = page.locator("#new-key");
      await shown.waitFor({ state: "visible" });
      const key = (await shown.locator('[data-field="key"]').textContent()) ?? "";
      assert.match(key, /^isk_\w+$/);
      await shown.getByRole("button", { name: "Copy key" }).click();
      assert.equal(await clipboard(), key);
      await shot(page, "api-key");

      const [listed] = (await (await api("/api/api-keys")).json()) as Record<string, unknown>[];
      assert.equal(listed!.name, "agent");
      assert.deepEqual(listed!.scopes, ["inboxes:read"]);
      assert.deepEqual(listed!.inboxIds, [inboxId]);
      const expiresIn = Date.parse(listed!.expiresAt as string) - Date.now();
      assert.ok(expiresIn > 3_500_000 && expiresIn <= 3_600_000, String(expiresIn));
      const reach = await app.request("/api/inboxes", { auth: key });
      assert.deepEqual((await reach.json()).data.map((i: { id: string }) => i.id), [inboxId]);

      await page.reload();
      assert.ok(!(await page.content()).includes(key), "the key is not shown again");
      const row = page.locator("tr[data-key-id]", { hasText: "agent" });
      await row.waitFor();
      await row.getByRole("button", { name: "Revoke" }).click();
      await row.waitFor({ state: "detached" });
      const refused = await app.request("/api/inboxes", { auth: key });
      await refused.body?.cancel();
      assert.equal(refused.status, 401);
    });

    await t.step("the event log pages on with nextCursor", async () => {
      await page.goto(`${app.baseUrl}/ui/events?limit=2`);
      const ids = () => page.locator("tr[data-event-id]").evaluateAll((rows) => rows.map((r) => r.dataset.eventId));
      const first = await ids();
      assert.equal(first.length, 2);
      assert.match(await page.locator("tr[data-event-id]").first().textContent() ?? "", /inbox\.created.*signup@/s);
      await page.getByRole("link", { name: /Next page/ }).click();
      const second = await ids();
      assert.equal(second.length, 2);
      assert.ok(!second.some((id) => first.includes(id)), "the next events");
      const log = await (await api("/api/events?limit=4")).json();
      assert.deepEqual([...first, ...second], log.data.map((e: { id: string }) => e.id), "in the API's order");
      await shot(page, "events");
    });

    await t.step("signing out ends the session", async () => {
      await page.getByRole("button", { name: "Sign out" }).click();
      await page.waitForURL(/\/ui\/login/);
      await page.goto(`${app.baseUrl}/ui/inboxes`);
      assert.equal(new URL(page.url()).pathname, "/ui/login");
    });

    await t.step("no error, no CSP violation, no other origin, only documented API calls, on every page", () => {
      assert.deepEqual(w.pageErrors, []);
      assert.deepEqual(w.failedOwn, []);
      // The mail's frame reports what its sandbox and policy refused (its document, or what the mail named, as
      // Chromium tells it); the UI's own pages report nothing.
      const aboutTheMail = (text: string) =>
        text.includes("about:srcdoc") || MAIL_ORIGINS.some((mailOrigin) => text.includes(mailOrigin));
      const own = w.consoleErrors.filter((e) => !aboutTheMail(`${e.url} ${e.text}`));
      assert.deepEqual(own, [], "console errors of the UI's pages");
      assert.deepEqual(w.cspViolations.filter((v) => !aboutTheMail(v)), [], "CSP violations of the UI's pages");
      // The mail's refusals were reported: its scripts, its frame, its stylesheet, and its images before they were asked for.
      for (
        const refused of [
          "Blocked script execution",
          "https://frames.example/",
          "https://styles.example/",
          REMOTE_IMAGE,
        ]
      ) {
        assert.ok(w.consoleErrors.some((e) => `${e.url} ${e.text}`.includes(refused)), refused);
      }
      assert.ok(w.blocked.every((url) => url.startsWith("https://images.example/")), `${w.blocked}`);
      assert.ok(w.scriptRequests.length > 0);
      for (const request of w.scriptRequests) {
        const [method, url] = request.split(" ");
        assert.equal(new URL(url!).origin, origin, request);
        assert.ok(documentedOperation(method!, url!), `${request} is not an operation of openapi.yaml`);
      }
      // Among them the writes and the stream.
      for (const expected of ["POST /api/auth/login", "POST /api/inboxes", "GET /api/events/stream"]) {
        assert.ok(
          w.scriptRequests.some((r) => r.startsWith(`${expected.split(" ")[0]} ${origin}${expected.split(" ")[1]}`)),
          expected,
        );
      }
    });
  } finally {
    await browser.close();
    await h.close();
  }
});
