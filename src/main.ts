/**
 * The one impure entry point. It reads the configuration and checks what
 * needs no database (`checkSettings`: the files settings name, HOST, the
 * ports) with only the modules that takes, so that a bad setting is refused
 * within a fraction of a second and before anything is opened; then it loads
 * the service (src/start.ts) and runs it. A refusal is one line naming the
 * variable and the cause, with exit code 2 and no stack trace.
 */
import { loadConfig } from "./config.ts";
import { ConfigError } from "./shared/config_error.ts";
import { checkSettings } from "./shared/preflight.ts";
import { withTimeout } from "./shared/with_timeout.ts";
import type { Opened } from "./start.ts";

async function main(): Promise<void> {
  const opened: Opened = {};
  try {
    const config = loadConfig(Deno.env.toObject());
    const settings = await checkSettings(config);
    const { start } = await import("./start.ts");
    await start(config, settings, opened);
  } catch (err) {
    // A setting the service cannot run with: one line that names it, no stack, exit code 2.
    if (!(err instanceof ConfigError)) throw err;
    console.error(err.message);
    // Closed, not dropped: the embedded database is then as clean as after SIGTERM.
    if (opened.db) await withTimeout(opened.db.close().catch(() => {}), 5000, () => {});
    Deno.exit(2);
  }
}

if (import.meta.main) await main();
