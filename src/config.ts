/**
 * Configuration, read once from the environment and validated with zod.
 *
 * A bad value stops start-up with a message naming the variable, so a typo in
 * a deployment never turns into a half-working service.
 */
import { z } from "zod";

const LOG_LEVELS = ["trace", "debug", "info", "warning", "error", "fatal"] as const;

const booleanString = z.enum(["true", "false", "1", "0"]).transform((v) => v === "true" || v === "1");

const port = z.coerce.number().int().min(0).max(65535);

const hostList = z.string().transform((v) =>
  new Set(v.split(",").map((h) => h.trim().toLowerCase()).filter((h) => h.length > 0))
);

const EnvSchema = z.object({
  PORT: port.default(8000),
  HOST: z.string().min(1).default("0.0.0.0"),
  DATABASE_URL: z.string().url().optional(),
  DATABASE_POOL_SIZE: z.coerce.number().int().min(1).max(100).default(10),
  DATA_DIR: z.string().min(1).default("./data"),
  ADMIN_TOKEN: z.string().min(16, "must be at least 16 characters").optional(),
  SERVICE_NAME: z.string().regex(/^[A-Za-z0-9._-]{1,64}$/, "must be 1 to 64 letters, digits, '.', '_' or '-'")
    .default("InboxService"),
  MAIL_DOMAIN: z.string().min(1).default("inbox.localhost"),
  SMTP_PORT: port.default(2525),
  SMTP_MAX_BYTES: z.coerce.number().int().min(1024).default(10 * 1024 * 1024),
  WEBHOOK_TRUSTED_HOSTS: hostList.default(new Set<string>()),
  WEBHOOK_CA_CERTS: z.string().min(1).optional(),
  ENCRYPTION_KEY: z.string().refine(
    (v) => /^[A-Za-z0-9+/]{43}=$/.test(v.trim()),
    "must be 32 random bytes in base64 (openssl rand -base64 32)",
  ).optional(),
  DELIVERY_TIMEOUT_MS: z.coerce.number().int().min(100).max(60_000).default(10_000),
  DELIVERY_CONCURRENCY: z.coerce.number().int().min(1).max(1024).default(64),
  DELIVERY_RETENTION_DAYS: z.coerce.number().int().min(1).max(3650).default(30),
  COOKIE_SECURE: booleanString.default(true),
  SESSION_TTL_DAYS: z.coerce.number().int().min(1).max(365).default(30),
  MAX_BODY_BYTES: z.coerce.number().int().min(1024).max(10 * 1024 * 1024).default(64 * 1024),
  LOG_LEVEL: z.enum(LOG_LEVELS).default("info"),
});

/** The service configuration, as the rest of the code sees it. */
export interface Config {
  port: number;
  host: string;
  databaseUrl: string | undefined;
  databasePoolSize: number;
  dataDir: string;
  adminToken: string | undefined;
  serviceName: string;
  mailDomain: string;
  smtpPort: number;
  smtpMaxBytes: number;
  webhookTrustedHosts: ReadonlySet<string>;
  webhookCaCerts: string | undefined;
  encryptionKey: string | undefined;
  deliveryRetentionDays: number;
  /** Spec 6.3: 10 s; lower only in tests. */
  deliveryTimeoutMs: number;
  /** Attempts in flight per instance, over all events. */
  deliveryConcurrency: number;
  cookieSecure: boolean;
  sessionTtlDays: number;
  maxBodyBytes: number;
  logLevel: (typeof LOG_LEVELS)[number];
}

/** Raised when the environment holds a value the service cannot run with. */
export class ConfigError extends Error {
  override name = "ConfigError";
}

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
  const e = parsed.data;
  return {
    port: e.PORT,
    host: e.HOST,
    databaseUrl: e.DATABASE_URL,
    databasePoolSize: e.DATABASE_POOL_SIZE,
    dataDir: e.DATA_DIR,
    adminToken: e.ADMIN_TOKEN,
    serviceName: e.SERVICE_NAME,
    mailDomain: e.MAIL_DOMAIN.toLowerCase(),
    smtpPort: e.SMTP_PORT,
    smtpMaxBytes: e.SMTP_MAX_BYTES,
    webhookTrustedHosts: e.WEBHOOK_TRUSTED_HOSTS,
    webhookCaCerts: e.WEBHOOK_CA_CERTS,
    encryptionKey: e.ENCRYPTION_KEY?.trim(),
    deliveryRetentionDays: e.DELIVERY_RETENTION_DAYS,
    deliveryTimeoutMs: e.DELIVERY_TIMEOUT_MS,
    deliveryConcurrency: e.DELIVERY_CONCURRENCY,
    cookieSecure: e.COOKIE_SECURE,
    sessionTtlDays: e.SESSION_TTL_DAYS,
    maxBodyBytes: e.MAX_BODY_BYTES,
    logLevel: e.LOG_LEVEL,
  };
}
