/**
 * The web UI without a browser: where a visitor without a session is sent,
 * the headers of every page (a Content-Security-Policy with a fresh nonce
 * and no inline script, no framing, no caching), the mail's sandboxed frame
 * and its own policy, that every write a page can make is an operation of
 * openapi.yaml, and that src/ui/ reads through the API only.
 * tests/e2e/ui_test.ts proves the same pages in Chromium.
 */
import assert from "node:assert/strict";
import { Parser } from "htmlparser2";
import { withService } from "../_helpers/harness.ts";
import { createWebhook, newApiKey, newUser, type TestApp, type User } from "../_helpers/app.ts";
import { documentedOperation } from "../_helpers/documented.ts";
import { sendMail } from "../messages/_support.ts";
import { HOME_PATH } from "../../src/service/routes.ts";
import { MAIL_SANDBOX } from "../../src/ui/mail_frame.ts";

/** One element of a page: its name and attributes (as the browser reads them: entities decoded). */
interface Element {
  name: string;
  attributes: Record<string, string>;
  /** The text directly inside it (for a script: its inline code). */
  text: string;
}

function elements(html: string): Element[] {
  const out: Element[] = [];
  const open: Element[] = [];
  const parser = new Parser({
    onopentag(name, attributes) {
      const element = { name, attributes, text: "" };
      out.push(element);
      open.push(element);
    },
    ontext(text) {
      const top = open.at(-1);
      if (top) top.text += text;
    },
    onclosetag() {
      open.pop();
    },
  }, { decodeEntities: true });
  parser.write(html);
  parser.end();
  return out;
}

/** The directives of a policy, by name. */
function directives(policy: string): Map<string, string[]> {
  return new Map(policy.split(";").map((d) => d.trim().split(/\s+/)).map(([name, ...values]) => [name!, values]));
}

async function page(app: TestApp, path: string, user?: User): Promise<{ res: Response; html: string }> {
  const res = await app.request(path, { redirect: "manual", ...(user ? { cookie: user.cookie } : {}) });
  return { res, html: await res.text() };
}

/** Asserts the UI's policy on a page and returns its directives and nonce. */
function expectPolicy(res: Response, html: string, what: string): { csp: Map<string, string[]>; nonce: string } {
  const header = res.headers.get("content-security-policy") ?? "";
  const csp = directives(header);
  assert.deepEqual(csp.get("default-src"), ["'none'"], `${what}: ${header}`);
  assert.deepEqual(csp.get("frame-ancestors"), ["'none'"], what);
  assert.deepEqual(csp.get("object-src"), ["'none'"], what);
  assert.deepEqual(csp.get("base-uri"), ["'none'"], what);
  assert.deepEqual(csp.get("connect-src"), ["'self'"], what);
  const script = csp.get("script-src") ?? [];
  assert.equal(script.length, 1, `${what}: script-src is one nonce: ${header}`);
  const nonce = /^'nonce-([A-Za-z0-9+/=]{22,})'$/.exec(script[0]!)?.[1];
  assert.ok(nonce, `${what}: ${header}`);
  assert.equal(res.headers.get("x-frame-options"), "DENY", what);
  assert.equal(res.headers.get("cache-control"), "no-store", what);
  assert.equal(res.headers.get("x-content-type-options"), "nosniff", what);
  // Every script is one of the UI's files under this nonce; none is inline, no element has an on... handler.
  const all = elements(html);
  const scripts = all.filter((e) => e.name === "script");
  assert.ok(scripts.length >= 1, what);
  for (const s of scripts) {
    assert.equal(s.attributes.nonce, nonce, `${what}: ${JSON.stringify(s.attributes)}`);
    assert.match(s.attributes.src ?? "", /^\/ui\/assets\/[a-z]+\.js$/, what);
    assert.equal(s.text.trim(), "", `${what}: no inline script`);
  }
  for (const e of all) {
    for (const name of Object.keys(e.attributes)) assert.ok(!name.startsWith("on"), `${what}: <${e.name} ${name}>`);
  }
  return { csp, nonce };
}

Deno.test("the web UI", async (t) => {
  await withService({ smtp: true, user: "pro", systemClock: true }, async (h) => {
    const { app, user } = h;
    // Before the inbox, so that its inbox.created event has a delivery in the webhook's log.
    const webhookId = await createWebhook(app, user, "https://hooks.example/inbox");
    await newApiKey(app, user, "for the list");
    const inbox = await (await app.request("/api/inboxes", {
      method: "POST",
      json: { localPart: "ui-test" },
      cookie: user.cookie,
    })).json();
    await sendMail(h.smtp.port, {
      to: inbox.address.replace("@", "+tagged@"),
      subject: "Your code",
      text: "Your code is 482913",
      html: '<p style="color:red">Code <b>482913</b></p><script>parent.document.title = "ran"</script>' +
        '<img src="https://images.example/x.png" onerror="parent.document.title = \'ran\'">' +
        '<a href="https://example.com/verify?t=1">Verify</a>',
    });
    const [message] = (await (await app.request(`/api/inboxes/${inbox.id}/messages`, { cookie: user.cookie }))
      .json()).data;
    const messagePath = `/ui/inboxes/${inbox.id}/messages/${message.id}`;
    const pages = [
      "/ui/inboxes",
      `/ui/inboxes/${inbox.id}`,
      messagePath,
      "/ui/webhooks",
      `/ui/webhooks/${webhookId}`,
      "/ui/api-keys",
      "/ui/events",
    ];

    await t.step("GET / goes to /ui, /ui to the inboxes, which need a session", async () => {
      assert.equal(HOME_PATH, "/ui");
      const home = await page(app, "/");
      assert.equal(home.res.status, 302);
      assert.equal(home.res.headers.get("location"), "/ui");
      const ui = await page(app, "/ui");
      assert.equal(ui.res.status, 302);
      assert.equal(ui.res.headers.get("location"), "/ui/inboxes");
      const followed = await app.request("/");
      assert.equal(followed.status, 200);
      assert.equal(new URL(followed.url).pathname, "/ui/login");
      assert.match(await followed.text(), /<form[^>]+data-request="POST \/api\/auth\/login"/);
    });

    await t.step("a page without a live session redirects to the sign-in page, which comes back to it", async () => {
      for (const path of pages) {
        for (const cookie of [undefined, "session=not-a-live-session", "session="]) {
          const res = await app.request(path, { redirect: "manual", ...(cookie ? { cookie } : {}) });
          await res.body?.cancel();
          assert.equal(res.status, 302, `${path} with ${cookie}`);
          const location = new URL(res.headers.get("location") ?? "", "http://x");
          assert.equal(location.pathname, "/ui/login", path);
          assert.equal(location.searchParams.get("next"), path);
          // The redirect itself carries the policy too.
          assert.match(res.headers.get("content-security-policy") ?? "", /frame-ancestors 'none'/);
        }
      }
      // The sign-in page sends the reader on to `next`, never to another site.
      const signIn = await page(app, `/ui/login?next=${encodeURIComponent(`/ui/inboxes/${inbox.id}`)}`);
      assert.equal(signIn.res.status, 200);
      expectPolicy(signIn.res, signIn.html, "sign-in");
      assert.match(signIn.html, new RegExp(`data-done="go:/ui/inboxes/${inbox.id}"`));
      for (
        const next of ["https://evil.example/", "//evil.example/", "/\\evil.example", "/ui//evil.example", "/docs"]
      ) {
        const other = await page(app, `/ui/login?next=${encodeURIComponent(next)}`);
        assert.match(other.html, /data-done="go:\/ui\/inboxes"/, next);
      }
      // Signed in already: straight on.
      const again = await page(app, `/ui/login?next=/ui/events`, user);
      assert.equal(again.res.status, 302);
      assert.equal(again.res.headers.get("location"), "/ui/events");
    });

    await t.step("every page sends a CSP with a fresh nonce and no inline script, and is not cached", async () => {
      for (const path of pages) {
        const first = await page(app, path, user);
        assert.equal(first.res.status, 200, `${path}: ${first.html.slice(0, 300)}`);
        assert.match(first.res.headers.get("content-type") ?? "", /^text\/html/);
        const { csp, nonce } = expectPolicy(first.res, first.html, path);
        const second = await page(app, path, user);
        assert.notEqual(expectPolicy(second.res, second.html, path).nonce, nonce, `${path}: a nonce per response`);
        // No source of another origin anywhere in the policy (remote images only once asked, below).
        for (const [name, values] of csp) {
          for (const value of values) {
            assert.ok(
              /^'(self|none|unsafe-inline|nonce-[A-Za-z0-9+/=]+)'$|^data:$/.test(value),
              `${path}: ${name} ${value}`,
            );
          }
        }
        const inlineStyles = (csp.get("style-src") ?? []).includes("'unsafe-inline'");
        assert.equal(inlineStyles, path === messagePath, `${path}: inline styles only for the mail's frame`);
      }
    });

    await t.step(
      "a message's HTML is in a sandboxed frame that runs no script and loads nothing until asked",
      async () => {
        for (const shown of [false, true]) {
          const { res, html } = await page(app, `${messagePath}${shown ? "?images=shown" : ""}`, user);
          assert.equal(res.status, 200);
          const { csp } = expectPolicy(res, html, messagePath);
          const frames = elements(html).filter((e) => e.name === "iframe");
          assert.equal(frames.length, 1);
          const frame = frames[0]!.attributes;
          assert.equal(frame.sandbox, MAIL_SANDBOX);
          for (const token of ["allow-scripts", "allow-same-origin", "allow-forms", "allow-top-navigation"]) {
            assert.ok(!frame.sandbox!.split(" ").includes(token), token);
          }
          assert.equal(frame.src, undefined, "the mail is never a URL of this origin");
          // The frame's own policy comes first in its head; the mail follows in its body.
          const doc = frame.srcdoc ?? "";
          const meta = elements(doc).find((e) =>
            e.name === "meta" && e.attributes["http-equiv"] === "Content-Security-Policy"
          );
          assert.ok(meta, doc.slice(0, 300));
          assert.ok(doc.indexOf(meta.attributes.content!) < doc.indexOf("<script>"));
          const inside = directives(meta.attributes.content!);
          assert.deepEqual(inside.get("default-src"), ["'none'"]);
          assert.deepEqual(inside.get("script-src"), ["'none'"]);
          assert.deepEqual(inside.get("img-src"), shown ? ["https:", "http:", "data:"] : ["data:"]);
          assert.match(doc, /<img src="https:\/\/images\.example\/x\.png"/, "the mail itself is unchanged");
          // The page's own policy binds the frame as well: remote images only once asked.
          assert.deepEqual(csp.get("img-src"), shown ? ["'self'", "data:", "https:", "http:"] : ["'self'", "data:"]);
          // The mail's markup is in the srcdoc only, never in the page.
          assert.ok(!elements(html).some((e) => e.name === "img" || (e.name === "script" && !e.attributes.src)));
        }
      },
    );

    await t.step("every write a page can make is an operation of openapi.yaml", async () => {
      const requests = new Set<string>();
      for (const [path, who] of [...pages.map((p) => [p, user] as const), ["/ui/login", undefined] as const]) {
        for (const e of elements((await page(app, path, who)).html)) {
          if (e.attributes["data-request"]) requests.add(e.attributes["data-request"]);
        }
      }
      // Sign in and out; create and delete an inbox, delete a message; create, change (edit, pause), test, delete a webhook,
      // redeliver; create and revoke a key.
      assert.equal(requests.size, 12, [...requests].join("\n"));
      for (const request of requests) {
        const [method, path] = request.split(" ");
        assert.ok(documentedOperation(method!, path!), `${request} is not an operation of openapi.yaml`);
        assert.ok(path!.startsWith("/api/"), request);
      }
      // And what the scripts call by themselves: the message list and the event stream.
      for (const name of ["ui.js", "live.js"]) {
        const res = await app.request(`/ui/assets/${name}`);
        assert.equal(res.status, 200);
        assert.match(res.headers.get("content-type") ?? "", /^text\/javascript/);
        const js = await res.text();
        for (const [, path] of js.matchAll(/(?:fetch|EventSource)\(\s*`([^`]+)`/g)) {
          const concrete = path!.replace(/\$\{[^}]+\}/g, "x");
          assert.ok(documentedOperation("GET", concrete), `${name}: ${path}`);
        }
        assert.doesNotMatch(js, /innerHTML|outerHTML|insertAdjacentHTML|document\.write|eval\(|new Function/, name);
      }
    });

    await t.step("the UI's files are served by the service; nothing else is", async () => {
      for (const [name, type] of [["ui.css", /^text\/css/], ["icon.svg", /^image\/svg\+xml/]] as const) {
        const res = await app.request(`/ui/assets/${name}`);
        assert.equal(res.status, 200);
        assert.match(res.headers.get("content-type") ?? "", type);
        await res.body?.cancel();
      }
      for (const name of ["routes.ts", "..%2Froutes.ts", "nope.js"]) {
        const res = await app.request(`/ui/assets/${name}`);
        await res.body?.cancel();
        assert.equal(res.status, 404, name);
      }
    });

    await t.step("a plan without webhooks or keys gets a page that says which plan has them", async () => {
      const free = await newUser(app, "free");
      for (const path of ["/ui/webhooks", "/ui/api-keys"]) {
        const { res, html } = await page(app, path, free);
        assert.equal(res.status, 403, path);
        expectPolicy(res, html, path);
        assert.match(html, /deno task admin set-plan/, path);
      }
      const unknown = await page(app, "/ui/inboxes/inb_unknown", user);
      assert.equal(unknown.res.status, 404);
      expectPolicy(unknown.res, unknown.html, "404");
    });
  });
});

Deno.test("src/ui reads and writes through the public API only: no database, no feature's internals", async () => {
  const root = new URL("../../src/ui/", import.meta.url);
  const files: string[] = [];
  const walk = async (dir: URL, prefix: string) => {
    for await (const entry of Deno.readDir(dir)) {
      if (entry.isDirectory) await walk(new URL(`${entry.name}/`, dir), `${prefix}${entry.name}/`);
      else if (/\.tsx?$/.test(entry.name)) files.push(`${prefix}${entry.name}`);
    }
  };
  await walk(root, "");
  assert.ok(files.includes("routes.ts"));
  // What src/ui/ may use of the rest of src/: the typed client, the HTTP plumbing, the clock, the cookie's name and
  // parser, and the loader of its pages on first use.
  const allowed = new Set([
    "client/mod.ts",
    "shared/on_first_use.ts",
    "http/env.ts",
    "http/security_headers.ts",
    "shared/clock.ts",
    "auth/cookie.ts",
  ]);
  const src = new URL("../", root).href;
  for (const file of files) {
    const text = await Deno.readTextFile(new URL(file, root));
    for (const [, specifier] of text.matchAll(/from "([^"]+)"/g)) {
      if (!specifier!.startsWith(".")) continue;
      const target = new URL(specifier!, new URL(file, root)).href;
      if (target.startsWith(root.href)) continue;
      assert.ok(allowed.has(target.slice(src.length)), `src/ui/${file} imports ${specifier}`);
    }
    assert.doesNotMatch(text, /\bsql`|postgres/, `src/ui/${file}`);
  }
});
