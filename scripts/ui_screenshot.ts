/**
 * Writes docs/ui.png, the picture of the web UI in README: `deno task
 * ui:screenshot`. It starts the service as `deno task start` does, on a
 * schema of its own on the test PostgreSQL (TEST_DATABASE_URL, dropped
 * afterwards), registers an account, signs in through the sign-in page in
 * headless Chromium (as tests/e2e/ does: CHROMIUM_PATH or /usr/bin/chromium),
 * opens an inbox, sends mail to it over SMTP while the page is open, and
 * photographs the verification mail.
 */
import { createTestDb } from "../tests/_helpers/db.ts";
import { ADMIN_TOKEN, apiAt } from "../tests/_helpers/app.ts";
import { freePort } from "../tests/_helpers/ports.ts";
import { serviceEnv, startService } from "../tests/_helpers/process.ts";
import { sendMail } from "../tests/messages/_support.ts";
import { launchChromium } from "../tests/e2e/_browser.ts";

const OUT = new URL("../docs/ui.png", import.meta.url);
const EMAIL = "you@example.com";
const PASSWORD = "correct horse battery";

/** The mail the picture shows: a sign-up confirmation as an application sends it. */
const CONFIRMATION_HTML = `<div style="font-family: Helvetica, Arial, sans-serif; background: #f2f4f8; padding: 24px">
  <div style="max-width: 480px; margin: 0 auto; background: #ffffff; border-radius: 8px; padding: 28px">
    <h2 style="margin: 0 0 12px; color: #1d2330">Confirm your email</h2>
    <p style="color: #3d4656">Welcome to Acme! Enter this code to finish signing up:</p>
    <p style="font-size: 30px; letter-spacing: 6px; font-weight: bold; color: #1d2330">482913</p>
    <p style="color: #3d4656">Or confirm with one click:</p>
    <p><a href="https://app.acme.example/confirm?token=7f3a9c" style="background: #2456d6; color: #ffffff;
      padding: 10px 18px; border-radius: 6px; text-decoration: none">Confirm my email</a></p>
    <img src="https://tracker.acme.example/open.gif" width="1" height="1" alt="">
  </div>
</div>`;

function check(res: Response, what: string): Response {
  if (!res.ok) throw new Error(`${what}: HTTP ${res.status}`);
  return res;
}

const db = await createTestDb();
const smtpPort = freePort();
const service = await startService(serviceEnv(db, { SMTP_PORT: String(smtpPort) }));
const browser = await launchChromium();
try {
  const api = apiAt(service.url);
  const registered = check(
    await api.request("/api/auth/register", { method: "POST", json: { email: EMAIL, password: PASSWORD } }),
    "register",
  );
  const { id } = await registered.json();
  const cookie = registered.headers.getSetCookie().find((c) => c.startsWith("session="))!.split(";")[0]!;
  await check(
    await api.request(`/admin/accounts/${id}`, { method: "PATCH", json: { plan: "pro" }, auth: ADMIN_TOKEN }),
    "plan",
  ).body?.cancel();
  const inbox = await check(
    await api.request("/api/inboxes", { method: "POST", json: { localPart: "signup", ttlSeconds: 86_400 }, cookie }),
    "inbox",
  ).json();

  const page = await browser.newPage({ viewport: { width: 1280, height: 1000 } });
  // Offline: the tracking pixel of the mail is never asked for (images stay blocked), and nothing else leaves.
  await page.route(
    "**/*",
    (route) =>
      new URL(route.request().url()).origin === service.url ? route.continue() : route.abort("blockedbyclient"),
  );
  await page.goto(`${service.url}/ui/inboxes/${inbox.id}`);
  await page.getByLabel("Email").fill(EMAIL);
  await page.getByLabel("Password").fill(PASSWORD);
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.locator('tbody[data-live="open"]').waitFor({ state: "attached" });

  // Sent while the inbox page is open: they appear there as they arrive.
  const [local, domain] = inbox.address.split("@");
  await sendMail(smtpPort, {
    from: "Acme Billing <billing@acme.example>",
    to: `${local}+invoices@${domain}`,
    subject: "Your invoice for November",
    text: "Your invoice is attached.",
  });
  await sendMail(smtpPort, {
    from: "Acme <hello@acme.example>",
    to: `${local}+run-42@${domain}`,
    subject: "Confirm your email",
    text: "Your code is 482913. Confirm: https://app.acme.example/confirm?token=7f3a9c",
    html: CONFIRMATION_HTML,
  });
  await page.locator("tr[data-message-id]", { hasText: "Confirm your email" }).waitFor();
  await page.locator("tr[data-message-id] a", { hasText: "Confirm your email" }).click();
  await page.frameLocator("iframe").getByText("Confirm my email").waitFor();
  await page.screenshot({ path: OUT.pathname });
  console.log(`Wrote ${OUT.pathname}`);
} finally {
  await browser.close();
  await service.stop();
  await db.close();
}
