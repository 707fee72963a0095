/**
 * Headless Chromium for the browser tests, and a watch on a page: every
 * request to another origin is aborted and recorded, and so are the page's
 * uncaught errors, console errors, Content-Security-Policy violations (as
 * the console reports them and as the page's own event does), the answers
 * of its own origin with an error status, and its script-made requests
 * (fetch, EventSource). Needs Debian's chromium (`apt-get install -y
 * chromium`) at /usr/bin/chromium, or CHROMIUM_PATH.
 */
import { type Browser, chromium, type Page } from "npm:playwright-core@1.65.1";

const CHROMIUM = Deno.env.get("CHROMIUM_PATH") ?? "/usr/bin/chromium";

/** How long a step may wait for the page. */
export const TIMEOUT_MS = 30_000;

/** Starts Chromium headless, with nothing that would reach the network on its own. */
export async function launchChromium(): Promise<Browser> {
  return await chromium.launch({
    executablePath: CHROMIUM,
    args: [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-background-networking",
      "--disable-quic",
      "--no-first-run",
      "--disable-component-update",
      "--disable-sync",
      // Chromium puts a sandboxed frame of an opaque origin (a mail's srcdoc frame) in a process of its own, and
      // Playwright's interception does not see that process's requests: they would go to the network unrecorded.
      // Kept in the page's process, every request of the frame passes through the route below, as the tests need.
      "--disable-features=IsolateSandboxedIframes",
    ],
  });
}

/** One console message: its type, text, and the URL of the document or resource it is about. */
export interface ConsoleEntry {
  type: string;
  text: string;
  url: string;
}

/** What a watched page did. */
export interface PageWatch {
  origin: string;
  /** Paths served by the page's own origin. */
  served: string[];
  /** URLs of other origins the page asked for (each aborted). */
  blocked: string[];
  /** `status URL` of own-origin answers with a status of 400 or more. */
  failedOwn: string[];
  pageErrors: string[];
  /** Console messages of type error. */
  consoleErrors: ConsoleEntry[];
  /** CSP refusals: `console: ...` messages (with their document) and `event: ...` reports of the page. */
  cspViolations: string[];
  /** `METHOD URL` of every fetch, XHR and EventSource request. */
  scriptRequests: string[];
}

/** Records what `page` does from now on (see the top of this file); requests to other origins are aborted. */
export async function watch(page: Page, origin: string): Promise<PageWatch> {
  const w: PageWatch = {
    origin,
    served: [],
    blocked: [],
    failedOwn: [],
    pageErrors: [],
    consoleErrors: [],
    cspViolations: [],
    scriptRequests: [],
  };
  await page.route("**/*", async (route) => {
    const request = route.request();
    const url = new URL(request.url());
    if (["fetch", "xhr", "eventsource"].includes(request.resourceType())) {
      w.scriptRequests.push(`${request.method()} ${request.url()}`);
    }
    if (url.origin === origin) {
      w.served.push(url.pathname);
      await route.continue();
    } else {
      w.blocked.push(request.url());
      await route.abort("blockedbyclient");
    }
  });
  page.on("response", (res) => {
    if (res.url().startsWith(origin) && res.status() >= 400) w.failedOwn.push(`${res.status()} ${res.url()}`);
  });
  page.on("pageerror", (err) => w.pageErrors.push(String(err)));
  page.on("console", (msg) => {
    const entry = { type: msg.type(), text: msg.text(), url: msg.location().url };
    if (entry.type === "error") w.consoleErrors.push(entry);
    if (/Content Security Policy/i.test(entry.text)) w.cspViolations.push(`console: ${entry.url}: ${entry.text}`);
  });
  await page.exposeFunction("reportCspViolation", (text: string) => w.cspViolations.push(`event: ${text}`));
  await page.addInitScript(`document.addEventListener("securitypolicyviolation", (e) =>
    reportCspViolation(e.effectiveDirective + " blocked " + (e.blockedURI || "inline") + " " + e.sample +
      " at " + e.sourceFile + ":" + e.lineNumber + ":" + e.columnNumber));`);
  return w;
}
