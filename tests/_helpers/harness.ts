/**
 * The one fixture of the service tests: a fresh schema, a manual clock, the
 * app composed by src/compose.ts and served on a loopback port, a DNS table
 * the app's resolver answers from and, where a test asks for them, a real
 * HTTPS receiver, the SMTP listener, a signed-in user and more instances on
 * the same schema. `close()` stops all of it and drops the schema.
 *
 * ```ts
 * await withService({ receiver: true, user: "pro" }, async ({ app, user, receiver }) => {
 *   await createWebhook(app, user, receiver.url("/hook"));
 * });
 * // or, to close it yourself:
 * const h = await startHarness({ receiver: true });
 * try { ... } finally { await h.close(); }
 * ```
 */
import type { Config } from "../../src/config.ts";
import type { Plan } from "../../src/accounts/schemas.ts";
import { type SmtpServerHandle, startSmtpServer } from "../../src/smtp/server.ts";
import { createTestDb, type TestDb } from "./db.ts";
import { ManualClock, T0 } from "./clock.ts";
import { newUser, startApp, type TestApp, testConfig, type User } from "./app.ts";
import { type Receiver, startReceiver } from "./receiver.ts";
import { dnsTable, tableResolver } from "./resolver.ts";
import { testSmtpTls } from "./smtp_tls.ts";

/** What to start besides the schema, the clock and the app (all optional). */
export interface HarnessOptions {
  /** Variables on top of the test configuration (testConfig). */
  env?: Record<string, string>;
  /** A whole configuration instead (e.g. `loadConfig({ ADMIN_TOKEN })` for the production defaults); `env` is then ignored. */
  config?: Config;
  /** Where the manual clock starts (default T0). */
  start?: Date | number;
  /**
   * Run on the wall clock instead (for checks against the real time, such as
   * signature timestamps a library verifies); `h.clock` is then absent.
   */
  systemClock?: boolean;
  /** Names the app's resolver answers (default none); `h.dns` may be changed while the test runs. */
  dns?: Record<string, string[]>;
  /**
   * Start a real HTTPS receiver the delivery client may reach: `localhost`
   * resolves to 127.0.0.1 and is a trusted host (WEBHOOK_TRUSTED_HOSTS).
   */
  receiver?: boolean;
  /** Start the SMTP listener on 127.0.0.1 and a random port, with the test certificate (smtp_tls.ts). */
  smtp?: boolean;
  /** Register a user of this plan as `h.user`. */
  user?: Plan;
  /** Start the delivery queue (claims on wake-ups); otherwise tests drive it with runOnce/drain. */
  startDeliveries?: boolean;
  /** Listen for other instances' notifications (key revocations, queued deliveries). */
  listen?: boolean;
  /** The random source of the app (retry jitter). */
  random?: () => number;
}

/** Another instance on the harness's schema: by default as the harness's own app is started. */
export interface InstanceOptions {
  /** Variables on top of the harness's. */
  env?: Record<string, string>;
  startDeliveries?: boolean;
  listen?: boolean;
  random?: () => number;
  /** Connections of its own pool (default 5). */
  poolSize?: number;
}

/** What every harness has. */
export interface HarnessBase {
  db: TestDb;
  app: TestApp;
  /** Host name (lower case) -> addresses the resolver answers; tests may change it. */
  dns: Map<string, string[]>;
  /** Starts another instance with its own pool on the same schema, clock and DNS; closed with the harness. */
  startInstance(opts?: InstanceOptions): Promise<TestApp>;
  close(): Promise<void>;
}

/** The harness `O` asks for: `receiver`, `smtp` and `user` are there when the options turn them on. */
export type Harness<O extends HarnessOptions = HarnessOptions> =
  & HarnessBase
  & (O extends { systemClock: true } ? { clock?: undefined } : { clock: ManualClock })
  & (O extends { receiver: true } ? { receiver: Receiver } : { receiver?: Receiver })
  & (O extends { smtp: true } ? { smtp: SmtpServerHandle } : { smtp?: SmtpServerHandle })
  & (O extends { user: Plan } ? { user: User } : { user?: User });

/** Starts what `opts` asks for; the caller closes it. */
export async function startHarness<const O extends HarnessOptions = Record<never, never>>(
  opts: O = {} as O,
): Promise<Harness<O>> {
  const closers: Array<() => Promise<void>> = [];
  const close = async () => {
    for (const closer of closers.splice(0).reverse()) await closer();
  };
  try {
    const db = await createTestDb();
    closers.push(() => db.close());
    const clock = opts.systemClock ? undefined : new ManualClock(opts.start ?? T0);
    const dns = dnsTable({ ...(opts.receiver ? { localhost: ["127.0.0.1"] } : {}), ...opts.dns });
    const resolver = tableResolver(dns);
    const env = {
      ...(opts.receiver ? { WEBHOOK_TRUSTED_HOSTS: "localhost" } : {}),
      ...(opts.smtp ? { HOST: "127.0.0.1", SMTP_PORT: "0" } : {}),
      ...opts.env,
    };
    const receiver = opts.receiver ? await startReceiver() : undefined;
    if (receiver) closers.push(() => receiver.close());
    const launch = async (sql: TestDb["sql"], o: InstanceOptions = {}) => {
      const app = await startApp(sql, {
        config: opts.config ?? testConfig({ ...env, ...o.env }),
        ...(clock ? { clock } : {}),
        resolver,
        startDeliveries: o.startDeliveries ?? opts.startDeliveries ?? false,
        listen: o.listen ?? opts.listen ?? false,
        ...(o.random ?? opts.random ? { random: o.random ?? opts.random } : {}),
      });
      closers.push(() => app.close());
      return app;
    };
    const app = await launch(db.sql);
    const smtp = opts.smtp ? await startSmtpServer(app.deps, { tls: await testSmtpTls() }) : undefined;
    if (smtp) closers.push(() => smtp.close());
    const user = opts.user ? await newUser(app, opts.user) : undefined;
    const harness: HarnessBase & {
      clock?: ManualClock;
      receiver?: Receiver;
      smtp?: SmtpServerHandle;
      user?: User;
    } = {
      db,
      app,
      dns,
      ...(clock ? { clock } : {}),
      startInstance: async (o = {}) => await launch(await db.connect(o.poolSize ?? 5), o),
      close,
      ...(receiver ? { receiver } : {}),
      ...(smtp ? { smtp } : {}),
      ...(user ? { user } : {}),
    };
    return harness as Harness<O>;
  } catch (err) {
    await close();
    throw err;
  }
}

/** Runs `fn` with the harness `opts` asks for and closes it afterwards, whatever `fn` did. */
export async function withService<const O extends HarnessOptions>(
  opts: O,
  fn: (h: Harness<O>) => Promise<void>,
): Promise<void> {
  const h = await startHarness(opts);
  try {
    await fn(h);
  } finally {
    await h.close();
  }
}
