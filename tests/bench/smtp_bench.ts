/**
 * The `smtp` scenario of `deno task bench`: durable SMTP ingestion of the
 * service against MailDev (npm `maildev`, the tool many teams run for the
 * same job), with one load generator for both, postfix's `smtp-source`.
 * Two loads: a new connection per message from 64 clients, and 8 kept
 * connections (`-d`).
 *
 * Neither tool is installed: postfix's package is downloaded with
 * `apt-get download` and unpacked into tests/bench/.cache (never installed),
 * MailDev is installed with npm into the same cache.
 */
import { sleep } from "../_helpers/wait.ts";
import { freePort } from "../_helpers/ports.ts";

const CACHE = new URL("./.cache/", import.meta.url);
const MAILDEV_VERSION = "3.0.0";

async function run(cmd: string, args: string[], cwd: URL, env: Record<string, string> = {}): Promise<string> {
  const out = await new Deno.Command(cmd, { args, cwd, env, stdout: "piped", stderr: "piped" }).output();
  const text = new TextDecoder().decode(out.stdout) + new TextDecoder().decode(out.stderr);
  if (!out.success) throw new Error(`${cmd} ${args.join(" ")} failed: ${text}`);
  return text;
}

async function exists(url: URL): Promise<boolean> {
  return await Deno.stat(url).then(() => true, () => false);
}

/** The path of smtp-source and the library directory it needs, unpacked from Debian's postfix package. */
export async function smtpSource(): Promise<{ bin: string; libs: string }> {
  const dir = new URL("postfix/", CACHE);
  const bin = new URL("root/usr/sbin/smtp-source", dir);
  if (!await exists(bin)) {
    await Deno.mkdir(dir, { recursive: true });
    await run("apt-get", ["download", "postfix"], dir).catch(async () => {
      await run("apt-get", ["update", "-qq"], dir);
      return await run("apt-get", ["download", "postfix"], dir);
    });
    const deb = [...Deno.readDirSync(dir)].find((e) => e.name.endsWith(".deb"));
    if (!deb) throw new Error("apt-get download postfix left no .deb");
    await run("dpkg", ["-x", deb.name, "root"], dir);
  }
  return { bin: bin.pathname, libs: new URL("root/usr/lib/postfix", dir).pathname };
}

/** Starts MailDev (installed into the cache with npm) with its SMTP port; resolves once it accepts connections. */
export async function startMailDev(): Promise<{ port: number; stop(): Promise<void> }> {
  const dir = new URL("maildev/", CACHE);
  const main = new URL("node_modules/maildev/dist/bin/maildev.js", dir);
  if (!await exists(main)) {
    await Deno.mkdir(dir, { recursive: true });
    await run(
      "npm",
      ["install", "--no-audit", "--no-fund", "--prefix", dir.pathname, `maildev@${MAILDEV_VERSION}`],
      dir,
    );
  }
  const port = freePort();
  const child = new Deno.Command("node", {
    args: [main.pathname, "--smtp", String(port), "--web", String(freePort()), "--ip", "127.0.0.1", "--silent"],
    stdout: "null",
    stderr: "null",
  }).spawn();
  for (let i = 0; i < 100; i++) {
    try {
      (await Deno.connect({ hostname: "127.0.0.1", port })).close();
      break;
    } catch {
      await sleep(100);
    }
  }
  return {
    port,
    stop: async () => {
      child.kill("SIGKILL");
      await child.status;
    },
  };
}

/** One smtp-source run: `messages` to `to` at 127.0.0.1:`port`; returns messages per second. */
export async function smtpLoad(
  tool: { bin: string; libs: string },
  port: number,
  to: string,
  load: { sessions: number; keep: boolean; messages: number },
): Promise<number> {
  const args = [
    ...(load.keep ? ["-d"] : []),
    "-s",
    String(load.sessions),
    "-m",
    String(load.messages),
    "-l",
    "2000",
    "-f",
    "bench@example.com",
    "-t",
    to,
    `127.0.0.1:${port}`,
  ];
  const started = performance.now();
  await run(tool.bin, args, new URL("./", import.meta.url), { LD_LIBRARY_PATH: tool.libs });
  return Math.round(load.messages / ((performance.now() - started) / 1000));
}
