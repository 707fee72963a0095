/**
 * Configuration, read once from the environment and validated with zod.
 *
 * A bad value stops start-up with a message naming the variable, so a typo in
 * a deployment never turns into a half-working service.
 *
 * `EnvSchema` is the one definition of every variable: its parsing, its
 * default, its normalisation and its documentation (`.describe()`, always the
 * last call of a field). The `Config` type and its camelCase keys are derived
 * from it, and docs/configuration.md's table is printed from it by
 * `deno task config:table` (scripts/config_table.ts; a test keeps the page in step).
 */
import type { LogLevel } from "@logtape/logtape";
import ipaddr from "ipaddr.js";
import { z } from "zod";
import { ConfigError } from "./shared/config_error.ts";

/** LogTape's level names, least severe first. */
const LOG_LEVELS = ["trace", "debug", "info", "warning", "error", "fatal"] as const satisfies readonly LogLevel[];

/** How log lines are written: see `setupLogging` in src/shared/log.ts. */
export const LOG_FORMATS = ["json", "pretty"] as const;
export type LogFormat = typeof LOG_FORMATS[number];

/** Other spellings accepted for a level (after lowercasing). */
const LOG_LEVEL_ALIASES: ReadonlyMap<string, LogLevel> = new Map([["warn", "warning"]]);

const code = (v: string) => `\`${v}\``;

/** An encryption key: 32 bytes in standard base64, as `openssl rand -base64 32` prints it. */
export const ENCRYPTION_KEY_PATTERN = /^[A-Za-z0-9+/]{43}=$/;

/** What `SMTP_AUTH` may be (src/smtp/auth.ts reads it). */
export const SMTP_AUTH_MODES = ["any", "api-key", "off"] as const;

const booleanString = z.enum(["true", "false", "1", "0"]).transform((v) => v === "true" || v === "1");

const port = z.coerce.number().int().min(0).max(65535);

const hostList = z.string().transform((v): ReadonlySet<string> =>
  new Set(v.split(",").map((h) => h.trim().toLowerCase()).filter((h) => h.length > 0))
);

/** A DNS name: dot-separated labels of letters, digits and inner hyphens (checked after lowercasing). */
const DOMAIN_NAME = /^(?=.{1,253}$)[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*$/;

/**
 * A host as a URL spells it (`hooks.example.com`, `127.0.0.1`, `[::1]`), the
 * form a webhook URL's host is compared in; undefined for anything else, such
 * as a URL, a host with a port, or a bare IPv6 address.
 */
function urlHost(entry: string): string | undefined {
  if (/[/:@?#\s\\]/.test(entry.replace(/^\[[0-9a-f:.]+\]$/, ""))) return undefined;
  try {
    return new URL(`https://${entry}/`).hostname;
  } catch {
    return undefined;
  }
}

/** Comma-separated hosts as URLs spell them, each checked and normalised (an IDN to its ASCII form). */
const urlHostList = hostList.transform((set, ctx): ReadonlySet<string> => {
  const hosts = [...set].map(urlHost);
  if (hosts.some((h) => h === undefined)) {
    ctx.addIssue({
      code: "custom",
      message: "must be comma-separated host names or addresses, without scheme, port or path " +
        "(e.g. localhost,hooks.example.com,[::1])",
    });
    return z.NEVER;
  }
  return new Set(hosts as string[]);
});

/** Comma-separated IP addresses or CIDR ranges, each checked. */
const addressRangeList = hostList.refine(
  (set) => [...set].every((entry) => ipaddr.isValid(entry) || ipaddr.isValidCIDR(entry)),
  "must be comma-separated IP addresses or CIDR ranges (e.g. 10.0.0.0/8)",
);

/**
 * Numbers per plan, written `pro=10,business=30`: the plans named take the
 * number given, the others keep their default. A plan absent from the
 * defaults has no allowance and cannot be given one here.
 */
function perPlan<P extends string>(plans: readonly P[], defaults: Record<P, number>) {
  const format = `must be a comma list of plan=number (1 to 1000000) for ${plans.join(", ")}, e.g. ${
    plans.map((p) => `${p}=${defaults[p]}`).join(",")
  }`;
  return z.string().transform((v, ctx): Record<P, number> => {
    const out: Record<P, number> = { ...defaults };
    for (const part of v.split(",")) {
      const m = /^\s*([a-z]+)\s*=\s*(\d{1,7})\s*$/.exec(part);
      const plan = m?.[1] as P | undefined;
      const n = Number(m?.[2]);
      if (!plan || !plans.includes(plan) || n < 1 || n > 1_000_000) {
        ctx.addIssue({ code: "custom", message: format });
        return z.NEVER;
      }
      out[plan] = n;
    }
    return out;
    // zod cannot see through Awaited<> of a generic record: the default is of the output type.
  }).default(defaults as never);
}

/** A positive whole number of at most `max`. */
const count = (max: number) => z.coerce.number().int().min(1).max(max);

/**
 * A URL with a PostgreSQL scheme. `new URL()` alone takes `localhost:5432` as
 * the scheme `localhost:` and the path `5432`, which the driver then read as
 * database "432".
 */
const databaseUrl = z.string().refine((v) => {
  try {
    const { protocol } = new URL(v);
    return protocol === "postgres:" || protocol === "postgresql:";
  } catch {
    return false;
  }
}, "must be a URL such as postgres://user:password@localhost:5432/inbox");

const logLevel = z.string()
  .transform((v) => v.toLowerCase())
  .transform((v) => LOG_LEVEL_ALIASES.get(v) ?? v)
  .pipe(z.enum(LOG_LEVELS));

/** Every environment variable the service reads, in the order docs/configuration.md lists them. */
export const EnvSchema = z.object({
  PORT: port.default(8000).describe("HTTP listener port"),
  HOST: z.string().refine(
    (v) => ipaddr.isValid(v) || DOMAIN_NAME.test(v.toLowerCase()),
    "must be an IP address or a host name of this machine (0.0.0.0 for all addresses, 127.0.0.1 for this machine only)",
  ).default("0.0.0.0").describe(
    "HTTP listener address (the SMTP listener binds to it too); a name must resolve to an address of this machine",
  ),
  HTTP_HEADERS_TIMEOUT_MS: z.coerce.number().int().min(100).max(600_000).default(10_000).describe(
    "Time an HTTP connection has to send a complete request head, from its opening or its previous response " +
      "(so also the idle keep-alive time); then it is closed, at most a tenth of that time (and 1 s) later. " +
      "Requests in progress and streaming responses are not cut",
  ),
  DATABASE_URL: databaseUrl.optional().describe(
    "PostgreSQL URL (`postgres://user:password@host:5432/database`). Unset: embedded PGlite in `DATA_DIR` " +
      "(one process only)",
  ),
  DATABASE_CONNECT_TIMEOUT_MS: z.coerce.number().int().min(0).max(3_600_000).default(30_000).describe(
    "At start-up, how long to keep trying a `DATABASE_URL` that does not answer (each try is logged) before " +
      "giving up with exit code 2",
  ),
  DATABASE_POOL_SIZE: z.coerce.number().int().min(1).max(100).default(10).describe(
    "Connections per instance (PostgreSQL only)",
  ),
  DATA_DIR: z.string().min(1).default("./data").describe("Embedded database directory (git-ignored)"),
  ADMIN_TOKEN: z.string().min(16, "must be at least 16 characters").optional().describe(
    "Enables the operator API `/admin` (at least 16 characters); unset: `/admin` is 404",
  ),
  METRICS_TOKEN: z.string().min(16, "must be at least 16 characters").optional().describe(
    "When set (at least 16 characters), `GET /metrics` requires `Authorization: Bearer <METRICS_TOKEN>` and answers " +
      "401 `UNAUTHORIZED` otherwise; unset: `/metrics` is open",
  ),
  SERVICE_NAME: z.string().regex(/^[A-Za-z0-9._-]{1,64}$/, "must be 1 to 64 letters, digits, '.', '_' or '-'")
    .default("InboxService").describe(
      "Sender name in the delivery `User-Agent` (`InboxService-Webhook/1.0`) and the SMTP banner",
    ),
  MAIL_DOMAIN: z.string().transform((v) => v.toLowerCase()).refine(
    (v) => DOMAIN_NAME.test(v),
    "must be a domain name such as inbox.example.com (letters, digits, '-' and '.')",
  ).default("inbox.localhost").describe(
    "Domain of inbox addresses (lowercased)",
  ),
  SMTP_PORT: port.default(2525).describe("SMTP listener port"),
  SMTP_MAX_BYTES: z.coerce.number().int().min(1024).default(10 * 1024 * 1024).describe(
    "SMTP message size limit (larger mail is refused with `552`)",
  ),
  SMTP_GREETING_DELAY_MS: z.coerce.number().int().min(0).max(10_000).default(0).describe(
    "Pause before the SMTP greeting; a client that sends before it is refused (421), as spam software does. " +
      "0: greet at once (smtp-server's own default is 100 ms, most of a message's time on a new connection)",
  ),
  SMTP_MAX_CONNECTIONS: z.coerce.number().int().min(1).max(100_000).default(1000).describe(
    "Open SMTP connections per instance; one more is answered `421` and closed",
  ),
  SMTP_MAX_CONNECTIONS_PER_ADDRESS: z.coerce.number().int().min(1).max(100_000).default(100).describe(
    "Open SMTP connections per client IP address; one more is answered `421` and closed",
  ),
  SMTP_TLS_CERT: z.string().min(1).optional().describe(
    "PEM file of the certificate (with its chain) that STARTTLS and `SMTPS_PORT` serve; set with `SMTP_TLS_KEY`, " +
      "read at start. Both unset: a self-signed certificate for `MAIL_DOMAIN`, `localhost` and `127.0.0.1`, kept " +
      "in `DATA_DIR/smtp-tls.pem` on the embedded database (made again when missing or within 30 days of its " +
      "end), made anew in memory at each start with `DATABASE_URL` (each instance its own)",
  ),
  SMTP_TLS_KEY: z.string().min(1).optional().describe("PEM file of the private key of `SMTP_TLS_CERT`"),
  SMTP_REQUIRE_TLS: booleanString.default(false).describe(
    "`true` (or `1`): `MAIL FROM` before STARTTLS is refused with `530` (on `SMTP_PORT`; `SMTPS_PORT` is TLS " +
      "from the start)",
  ),
  SMTPS_PORT: port.optional().describe(
    "Port of a second SMTP listener with implicit TLS (SMTPS, as port 465), same rules as `SMTP_PORT`; unset: none",
  ),
  SMTP_AUTH: z.enum(SMTP_AUTH_MODES).default("any").describe(
    "AUTH PLAIN and LOGIN: `any` accepts every username and password, with or without TLS; `api-key` takes a " +
      "live API key of a plan with API keys as the password (any username), only after STARTTLS (`530` before, " +
      "`535` for another password), and an authenticated session delivers only to inboxes of that key's account " +
      "(`550` for others); `off`: AUTH not offered. Mail without AUTH is accepted in every mode",
  ),
  WEBHOOK_TRUSTED_HOSTS: urlHostList.default(new Set<string>()).describe(
    "Comma-separated hosts exempt from the private-address checks (development only), as a URL spells them: " +
      "`localhost`, `hooks.internal`, `[::1]`",
  ),
  WEBHOOK_CA_CERTS: z.string().min(1).optional().describe(
    "PEM file of extra CAs trusted for webhook receivers; read at start-up, which refuses a file it cannot read or " +
      "that holds no certificate",
  ),
  ENCRYPTION_KEY: z.string().trim().regex(
    ENCRYPTION_KEY_PATTERN,
    "must be 32 random bytes in base64 (openssl rand -base64 32)",
  ).optional().describe(
    "32 random bytes in base64 (`openssl rand -base64 32`) encrypting webhook secrets at rest; " +
      "required with `DATABASE_URL` (unset: generated once into `DATA_DIR/encryption.key`). Keep it: a start with " +
      "a key that cannot decrypt the stored secrets is refused",
  ),
  DELIVERY_RETENTION_DAYS: z.coerce.number().int().min(1).max(3650).default(30).describe(
    "How long delivery records are kept",
  ),
  EVENT_STREAM_KEEP_ALIVE_MS: z.coerce.number().int().min(100).max(60_000).default(15_000).describe(
    "Longest silence on an event stream before a `: keep-alive` comment (under the idle timeout of proxies)",
  ),
  EVENT_STREAMS_PER_ACCOUNT: count(100_000).default(20).describe(
    "Event streams (`GET /api/events/stream`) one account may hold open over all instances; one more is " +
      "429 `RATE_LIMITED` with `Retry-After`",
  ),
  MESSAGE_WAITS_PER_ACCOUNT: count(100_000).default(200).describe(
    "Pending waits (`GET .../messages/wait` holding for a message) one account may have over all instances; one " +
      "more is 429 `RATE_LIMITED` with `Retry-After` (a wait answered at once does not count)",
  ),
  EVENT_RETENTION_DAYS: z.coerce.number().int().min(1).max(3650).default(7).describe(
    "How long the event log (`GET /api/events`, the live stream's replay) keeps every event; an event a kept " +
      "delivery record refers to stays as long as that record",
  ),
  DELIVERY_TIMEOUT_MS: z.coerce.number().int().min(100).max(60_000).default(10_000).describe(
    "Delivery timeout (spec 6.3: 10 s; lower only for tests)",
  ),
  DELIVERY_CONCURRENCY: z.coerce.number().int().min(1).max(1024).default(64).describe(
    "Attempts in flight per instance, over all events (3 per event at most, always)",
  ),
  DELIVERY_CONCURRENCY_PER_ACCOUNT: z.coerce.number().int().min(1).max(1024).default(32).describe(
    "Attempts of one account in flight over all instances, at most (one instance sends an account's attempts at a time); within it, an account holds at most half of the slots the other accounts on its instance leave",
  ),
  INBOXES_PER_ACCOUNT: perPlan(["free", "pro", "business"], { free: 10, pro: 100, business: 1_000 }).describe(
    "Live inboxes one account may hold, by plan (400 `INBOX_LIMIT` beyond; expired inboxes do not count)",
  ),
  WEBHOOK_TESTS_PER_MINUTE: perPlan(["pro", "business"], { pro: 10, business: 30 }).describe(
    "`POST /api/user-webhooks/{id}/test` per account and minute, by plan (429 `RATE_LIMITED` with `Retry-After` beyond)",
  ),
  REDELIVERIES_PER_MINUTE: perPlan(["pro", "business"], { pro: 30, business: 100 }).describe(
    "`POST .../deliveries/{deliveryId}/redeliver` and `POST .../recover` (together, one call each) per account and " +
      "minute, by plan (429 `RATE_LIMITED` beyond)",
  ),
  COOKIE_SECURE: booleanString.default(true).describe(
    "`false` (or `0`) drops the `Secure` flag of the session cookie (plain-HTTP development)",
  ),
  SESSION_TTL_DAYS: z.coerce.number().int().min(1).max(365).default(30).describe("Session lifetime in days"),
  LOGIN_EMAIL_MAX_FAILURES: count(10_000).default(10).describe(
    "Failed logins per email (trimmed, lowercased) in the window; the next attempt starts a lockout (429), " +
      "right password or not. A successful login clears the count",
  ),
  LOGIN_ADDRESS_MAX_FAILURES: count(1_000_000).default(100).describe(
    "Failed logins allowed per client address (whatever the emails) in the window, then a lockout of the address",
  ),
  LOGIN_FAILURE_WINDOW_SECONDS: z.coerce.number().int().min(60).max(3600).default(900).describe(
    "Sliding window of the failed-login counts (60 to 3600)",
  ),
  LOGIN_LOCKOUT_SECONDS: count(86_400).default(300).describe(
    "First lockout; each further one in a row lasts twice as long. A series is forgotten 24 h after its last lockout",
  ),
  LOGIN_LOCKOUT_MAX_SECONDS: count(86_400).default(3600).describe("Longest lockout"),
  REGISTRATIONS_PER_ADDRESS_PER_HOUR: count(1_000_000).default(20).describe(
    "Registration attempts per client address in a sliding hour (429 `RATE_LIMITED` with `Retry-After` beyond)",
  ),
  TRUSTED_PROXIES: addressRangeList.default(new Set<string>()).describe(
    "Reverse proxies (comma-separated addresses or CIDR ranges) whose `X-Forwarded-For` names the client; " +
      "empty: the header is ignored",
  ),
  MAX_BODY_BYTES: z.coerce.number().int().min(1024).max(10 * 1024 * 1024).default(64 * 1024).describe(
    "Largest accepted request body (413 beyond)",
  ),
  LOG_LEVEL: logLevel.default("info").describe(
    `${LOG_LEVELS.map(code).join(", ")} (up to ${code("info")} on stdout, ${
      code("warning")
    } and above on stderr), in any letter case; ` +
      [...LOG_LEVEL_ALIASES].map(([alias, level]) => `${code(alias)} is read as ${code(level)}`).join(", "),
  ),
  LOG_FORMAT: z.string().transform((v) => v.toLowerCase()).pipe(z.enum(LOG_FORMATS)).optional().describe(
    `${code("json")} (one JSON object per line, for a log collector) or ${code("pretty")} (time, level, ` +
      `category and message, readable in a terminal), in any letter case; unset: ${code("pretty")} when stdout ` +
      `is a terminal, ${code("json")} otherwise`,
  ),
}).superRefine((env, ctx) => {
  // A certificate without its key (or the reverse) cannot be served, and a self-signed one in its place would hide
  // the mistake.
  if ((env.SMTP_TLS_CERT === undefined) !== (env.SMTP_TLS_KEY === undefined)) {
    const [set, unset] = env.SMTP_TLS_CERT === undefined
      ? ["SMTP_TLS_KEY", "SMTP_TLS_CERT"]
      : ["SMTP_TLS_CERT", "SMTP_TLS_KEY"];
    ctx.addIssue({
      code: "custom",
      path: [set],
      message: `is set without ${unset}: set both (PEM files of the certificate and its key), or neither for a ` +
        "self-signed certificate",
    });
  }
  // Caught here, a clash would otherwise read as a port held by another process.
  for (const [other, value] of [["SMTP_PORT", env.SMTP_PORT], ["PORT", env.PORT]] as const) {
    if (env.SMTPS_PORT !== undefined && env.SMTPS_PORT !== 0 && env.SMTPS_PORT === value) {
      ctx.addIssue({ code: "custom", path: ["SMTPS_PORT"], message: `must differ from ${other} (both are ${value})` });
    }
  }
});

/** An environment variable's name, e.g. `SMTP_MAX_BYTES`. */
export type EnvName = keyof typeof EnvSchema.shape & string;

/** `SMTP_MAX_BYTES` -> `smtpMaxBytes`, at the type level. */
type CamelCase<S extends string> = S extends `${infer Head}_${infer Tail}`
  ? `${Lowercase<Head>}${Capitalize<CamelCase<Tail>>}`
  : Lowercase<S>;

/** `SMTP_MAX_BYTES` -> `smtpMaxBytes`, at run time; the same mapping as `CamelCase`. */
export function configKey<N extends string>(name: N): CamelCase<N> {
  return name.toLowerCase().replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase()) as CamelCase<N>;
}

type Env = z.output<typeof EnvSchema>;

/**
 * The service configuration, as the rest of the code sees it: every variable
 * under its camelCase name, always present (`undefined` when unset and
 * without default).
 */
export type Config = { [N in keyof Required<Env> as CamelCase<N & string>]: Env[N] };

/** Reads and validates the configuration from an environment map. */
export function loadConfig(env: Record<string, string | undefined>): Config {
  // Empty strings mean "unset", as with most twelve-factor services.
  const cleaned = Object.fromEntries(
    Object.entries(env).filter(([, v]) => v !== undefined && v !== ""),
  );
  const parsed = EnvSchema.safeParse(cleaned);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((issue) => `${issue.path.join(".")}: ${issue.message}`);
    throw new ConfigError(`Invalid configuration: ${lines.join("; ")}`);
  }
  // Checked here rather than at the second bind, whose "already in use" would send the user looking for another process.
  if (parsed.data.PORT === parsed.data.SMTP_PORT && parsed.data.PORT !== 0) {
    throw new ConfigError(
      `Invalid configuration: SMTP_PORT: must differ from PORT (both are ${parsed.data.PORT}): set one of them to another port`,
    );
  }
  const config: Record<string, unknown> = {};
  for (const name of Object.keys(EnvSchema.shape) as EnvName[]) {
    config[configKey(name)] = parsed.data[name];
  }
  return config as Config;
}
