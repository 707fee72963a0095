/**
 * Typed client of the Inbox Service API, a thin layer over openapi-fetch and
 * the types generated from `openapi.yaml`: every call returns openapi-fetch's
 * `{ data, error, response }`, where `error` is the API's error body.
 *
 * ```ts
 * const client = createClient({ baseUrl: "http://localhost:8000", apiKey: "isk_..." });
 * const { data, error } = await client.webhooks.create({ url, events: ["message.received"], secret });
 * ```
 *
 * Receivers verify deliveries with `verifyWebhookSignature` / `parseWebhookEvent`.
 */
import createFetchClient, { type Client, type FetchResponse, type Middleware } from "npm:openapi-fetch@0.17.0";
import type { components, operations, paths } from "../../generated/api.d.ts";
import { readSse } from "./sse.ts";

export type { components, operations, paths };
export type { Client as RawClient, Middleware } from "npm:openapi-fetch@0.17.0";
export {
  parseWebhookEvent,
  type ParseWebhookOptions,
  verifyWebhookSignature,
  type WebhookEvent,
  type WebhookEventType,
  type WebhookHeaders,
  type WebhookSecrets,
  WebhookVerificationError,
  type WebhookVerificationFailure,
} from "./verify.ts";

type Schemas = components["schemas"];
/** Body of every 4xx/5xx answer. */
export type ApiErrorBody = Schemas["Error"];
export type Account = Schemas["Account"];
export type Plan = Schemas["Plan"];
export type Credentials = Schemas["Credentials"];
export type ApiKey = Schemas["ApiKey"];
export type ApiKeyCreated = Schemas["ApiKeyCreated"];
export type EventType = Schemas["EventType"];
export type DeliveryEventType = Schemas["DeliveryEventType"];
/** A type of the event log: the subscribable ones, `webhook.disabled` and `webhook.enabled`. */
export type LogEventType = Schemas["LogEventType"];
export type Webhook = Schemas["Webhook"];
export type WebhookSummary = Schemas["WebhookSummary"];
export type WebhookCreated = Schemas["WebhookCreated"];
export type WebhookCreateRequest = Schemas["WebhookCreateRequest"];
export type WebhookUpdateRequest = Schemas["WebhookUpdateRequest"];
export type WebhookTestResult = Schemas["WebhookTestResult"];
export type WebhookSecretRotateRequest = Schemas["WebhookSecretRotateRequest"];
export type WebhookSecretRotated = Schemas["WebhookSecretRotated"];
export type Delivery = Schemas["Delivery"];
export type DeliveryList = Schemas["DeliveryList"];
export type RecoverRequest = Schemas["RecoverRequest"];
export type RecoverQueued = Schemas["RecoverQueued"];
export type RecoverDryRun = Schemas["RecoverDryRun"];
export type Inbox = Schemas["Inbox"];
export type InboxCreateRequest = Schemas["InboxCreateRequest"];
export type InboxList = Schemas["InboxList"];
export type Message = Schemas["Message"];
export type MessageSummary = Schemas["MessageSummary"];
export type MessageList = Schemas["MessageList"];
export type Attachment = Schemas["Attachment"];
export type Event = Schemas["Event"];
export type EventList = Schemas["EventList"];
export type Link = Schemas["Link"];
export type MessageReceivedEvent = Schemas["MessageReceivedEvent"];
export type InboxCreatedEvent = Schemas["InboxCreatedEvent"];
export type InboxExpiredEvent = Schemas["InboxExpiredEvent"];
export type TestEvent = Schemas["TestEvent"];
export type WebhookDisabledEvent = Schemas["WebhookDisabledEvent"];
export type WebhookEnabledEvent = Schemas["WebhookEnabledEvent"];
export type MessageReceivedData = Schemas["MessageReceivedData"];
export type InboxCreatedData = Schemas["InboxCreatedData"];
export type InboxExpiredData = Schemas["InboxExpiredData"];
export type TestData = Schemas["TestData"];
export type WebhookDisabledData = Schemas["WebhookDisabledData"];
export type WebhookEnabledData = Schemas["WebhookEnabledData"];

/** Options of `createClient`. */
export interface ClientOptions {
  /** Root of the service, e.g. `http://localhost:8000`. */
  baseUrl: string;
  /**
   * API key (`isk_...`), sent as `Authorization: Bearer` on every `/api` call.
   * When the option is given it must hold a key: `undefined` or an empty
   * string (an unset `INBOX_API_KEY`) throws `MissingApiKeyError` at once.
   * Leave it out for a client that registers or logs in (a session cookie) or
   * only calls `/admin`.
   */
  apiKey?: string;
  /** Session cookie (`session=...`). Register and login replace it; logout clears it. */
  cookie?: string;
  /** Operator token, sent only to `/admin` calls. */
  adminToken?: string;
  /** A fetch to use instead of the global one. */
  fetch?: (input: Request) => Promise<Response>;
  /** Extra headers for every request. */
  headers?: Record<string, string>;
}

/** Page options of the list calls. */
export interface PageQuery {
  limit?: number;
  cursor?: string;
}

/** Filters of the message list and of the wait: case-insensitive substrings, combined with AND. */
export interface MessageFilter {
  /** The sender's address or display name contains this. */
  from?: string;
  /**
   * The recipient address the message was sent to contains this (a tag
   * included): one inbox per CI run, `ci+<test-id>@...` per test, and
   * `waitFor(inbox.id, { to: "ci+<test-id>@" })`.
   */
  to?: string;
  /** The subject contains this. */
  subject?: string;
  /** The text or HTML body contains this. */
  contains?: string;
  /** Received at or after this instant (inclusive, millisecond precision). */
  since?: Date | string;
}

/** Options of `messages.waitFor`. */
export interface WaitForOptions extends MessageFilter {
  /** Only messages received after this message (id) of the inbox. */
  after?: string;
  /** How long to wait in all, in ms (default 30000); may be longer than one server hold (55 s). */
  timeoutMs?: number;
  /** Gives up early. */
  signal?: AbortSignal;
}

/** Options of `deliveries.recover`: the body, with `since` and `until` as `Date`s or strings. */
export interface RecoverOptions {
  /** Events created at or after this instant. */
  since: Date | string;
  /** Events created at or before this instant (default: now). */
  until?: Date | string;
  /** Count, queue nothing. */
  dryRun?: boolean;
}

/** Options of `messages.expectNone`. */
export interface ExpectNoneOptions extends MessageFilter {
  /** How long nothing may arrive, in ms. */
  withinMs: number;
  after?: string;
  signal?: AbortSignal;
}

/** Options of `events.list`. */
export interface EventListQuery {
  /** Only events after this event id. */
  after?: string;
  /** Only these types. */
  types?: LogEventType[];
  limit?: number;
}

/** Options of `events.stream`. */
export interface EventStreamOptions {
  /** Replay the stored events after this id first; without it the stream starts live. */
  after?: string;
  /** Only these types. */
  types?: LogEventType[];
  /** Ends the stream (the iterator returns). */
  signal?: AbortSignal;
  /**
   * Pause before reconnecting after a dropped connection or a failed try, in
   * ms (default 1000); it doubles with each failed try in a row, up to `maxRetryMs`.
   */
  retryMs?: number;
  /** Longest pause between two tries, in ms (default 5000). */
  maxRetryMs?: number;
  /** How long a try may wait for the answer's headers before it counts as failed, in ms (default 10000). */
  connectTimeoutMs?: number;
  /** Called each time a connection is open (200), before any of its events. */
  onOpen?: (open: StreamOpen) => void;
  /** Called for each failed try and each dropped connection, before the pause that follows. */
  onRetry?: (retry: StreamRetry) => void;
}

/** A connection of `events.stream` that is open. */
export interface StreamOpen {
  /** The stream's URL (without its query). */
  url: string;
  /** The event it resumes after (`Last-Event-ID`), if any. */
  after: string | undefined;
  /** Failed tries since the last open connection (0 for a first try that succeeds). */
  failures: number;
}

/** Why `events.stream` is about to try again, and when. */
export interface StreamRetry {
  /** The stream's URL (without its query). */
  url: string;
  /** What went wrong: the fetch error, the read error, or the InboxServiceError of a 5xx answer. */
  error: unknown;
  /** True when an open connection was cut; false when a try failed. */
  dropped: boolean;
  /** Failed tries in a row, this one included (0 for a drop). */
  failures: number;
  /** The pause before the next try, in ms. */
  delayMs: number;
}

/** The event stream's connection was cut, or the service ended the answer (it then reconnects). */
export class StreamDroppedError extends Error {
  override name = "StreamDroppedError";
}

/** An attachment's contents, as downloaded. */
export interface AttachmentContent {
  content: Uint8Array;
  contentType: string;
}

/** A call answered with an error status: `status` and the API's error body (`code`, `error`, `hint`). */
export class InboxServiceError extends Error {
  override name = "InboxServiceError";
  constructor(readonly status: number, readonly body: ApiErrorBody | undefined) {
    super(body ? `${status} ${body.code}: ${body.error}${body.hint ? ` (${body.hint})` : ""}` : `HTTP ${status}`);
  }
}

/**
 * `createClient` was given an `apiKey` option without a key in it (undefined,
 * or empty as an unset environment variable reads): refused at construction
 * rather than sent as no credential, which would fail later on every call.
 */
export class MissingApiKeyError extends Error {
  override name = "MissingApiKeyError";
  constructor() {
    super(
      "apiKey is required: the apiKey option is undefined or empty (is INBOX_API_KEY set?); pass an API key " +
        "(isk_...), or leave the option out for a client that signs in with a session",
    );
  }
}

/** `messages.waitFor` found no matching message within its timeout. */
export class WaitTimeoutError extends Error {
  override name = "WaitTimeoutError";
  constructor(readonly inboxId: string, readonly timeoutMs: number) {
    super(`No matching message arrived in inbox ${inboxId} within ${timeoutMs} ms`);
  }
}

/** `messages.expectNone` saw a matching message arrive. */
export class UnexpectedMessageError extends Error {
  override name = "UnexpectedMessageError";
  constructor(readonly received: Message) {
    super(
      `A matching message arrived: ${received.id} from ${received.from}, subject ${JSON.stringify(received.subject)}`,
    );
  }
}

/** The longest hold the server grants one wait request (its `timeoutMs` maximum). */
const MAX_HOLD_MS = 55_000;
const DEFAULT_WAIT_MS = 30_000;

const SESSION_PATHS = new Set(["/api/auth/register", "/api/auth/login"]);

/** The session pair (`session=...`) of a response's Set-Cookie, if any. */
function sessionCookie(response: Response): string | undefined {
  const header = response.headers.getSetCookie().find((c) => c.startsWith("session="));
  return header?.split(";")[0];
}

/** Waits `ms`, or less when `signal` aborts. */
function pause(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal?.removeEventListener("abort", done);
      resolve();
    }
    signal?.addEventListener("abort", done, { once: true });
  });
}

/** A `since` as the API takes it. */
function isoOf(since: Date | string | undefined): string | undefined {
  return since instanceof Date ? since.toISOString() : since;
}

/** The API's error body, when the answer carried one. */
function errorBody(error: unknown): ApiErrorBody | undefined {
  return typeof error === "object" && error !== null && "code" in error ? error as ApiErrorBody : undefined;
}

type Media = `${string}/${string}`;
/** What a call of operation `M` on path `P` resolves to: openapi-fetch's `{ data, error, response }`. */
export type ApiResult<P extends keyof paths, M extends keyof paths[P]> = Promise<
  FetchResponse<NonNullable<paths[P][M]> & Record<string | number, unknown>, Record<never, never>, Media>
>;

/** The client `createClient` returns: one method per operation of `openapi.yaml`. */
export interface InboxServiceClient {
  /** The openapi-fetch client (typed by path), sharing credentials and middleware. */
  raw: Client<paths>;
  /** Adds openapi-fetch middleware (logging, retries, recording). */
  use(...middleware: Middleware[]): void;
  /** The current session cookie, if any. */
  readonly cookie: string | undefined;
  auth: {
    /** Creates a free account and keeps its session cookie. */
    register(body: Credentials): ApiResult<"/api/auth/register", "post">;
    /** Starts a session and keeps its cookie. */
    login(body: Credentials): ApiResult<"/api/auth/login", "post">;
    /** Ends the session and forgets the cookie. */
    logout(): ApiResult<"/api/auth/logout", "post">;
  };
  /** The account of the credential in use. */
  me(): ApiResult<"/api/me", "get">;
  apiKeys: {
    create(body: Schemas["ApiKeyCreateRequest"]): ApiResult<"/api/api-keys", "post">;
    list(): ApiResult<"/api/api-keys", "get">;
    delete(keyId: string): ApiResult<"/api/api-keys/{id}", "delete">;
  };
  webhooks: {
    list(): ApiResult<"/api/user-webhooks", "get">;
    create(body: WebhookCreateRequest): ApiResult<"/api/user-webhooks", "post">;
    get(webhookId: string): ApiResult<"/api/user-webhooks/{id}", "get">;
    update(webhookId: string, body: WebhookUpdateRequest): ApiResult<"/api/user-webhooks/{id}", "patch">;
    delete(webhookId: string): ApiResult<"/api/user-webhooks/{id}", "delete">;
    /** Sends a signed `test` event now and reports the receiver's answer. */
    test(webhookId: string): ApiResult<"/api/user-webhooks/{id}/test", "post">;
    /**
     * Replaces the signing secret (with `secret`, or a generated one that
     * `data.secret` holds); the old one keeps signing beside it for
     * `overlapSeconds` (default a day), until `data.previousSecretExpiresAt`.
     */
    rotateSecret(
      webhookId: string,
      body?: WebhookSecretRotateRequest,
    ): ApiResult<"/api/user-webhooks/{id}/rotate-secret", "post">;
  };
  deliveries: {
    list(webhookId: string, query?: PageQuery): ApiResult<"/api/user-webhooks/{id}/deliveries", "get">;
    redeliver(
      webhookId: string,
      deliveryId: string,
    ): ApiResult<"/api/user-webhooks/{id}/deliveries/{deliveryId}/redeliver", "post">;
    /**
     * Queues again every event since `since` (to `until`) whose latest
     * attempt on the webhook failed or was cancelled: 202 `{ queued }`, or
     * with `dryRun: true` 200 `{ wouldQueue }` and nothing queued. Dates may
     * be given as `Date`s.
     */
    recover(
      webhookId: string,
      body: RecoverOptions,
    ): ApiResult<"/api/user-webhooks/{id}/recover", "post">;
  };
  inboxes: {
    create(body?: InboxCreateRequest): ApiResult<"/api/inboxes", "post">;
    list(query?: PageQuery): ApiResult<"/api/inboxes", "get">;
    get(inboxId: string): ApiResult<"/api/inboxes/{id}", "get">;
    delete(inboxId: string): ApiResult<"/api/inboxes/{id}", "delete">;
  };
  messages: {
    list(inboxId: string, query?: PageQuery & MessageFilter): ApiResult<"/api/inboxes/{id}/messages", "get">;
    get(inboxId: string, messageId: string): ApiResult<"/api/inboxes/{id}/messages/{messageId}", "get">;
    /**
     * Resolves with the earliest matching message after `after` (or the first
     * one, whenever it arrived), waiting on the server up to `timeoutMs` in all,
     * across as many server holds as that takes. Rejects with
     * `WaitTimeoutError` when none came, `InboxServiceError` on an error answer.
     */
    waitFor(inboxId: string, options?: WaitForOptions): Promise<Message>;
    /** Resolves when no matching message arrives within `withinMs`; rejects with `UnexpectedMessageError` if one does. */
    expectNone(inboxId: string, options: ExpectNoneOptions): Promise<void>;
    /** The message exactly as received (`message/rfc822` bytes); rejects with `InboxServiceError` otherwise. */
    raw(inboxId: string, messageId: string): Promise<Uint8Array>;
    delete(inboxId: string, messageId: string): ApiResult<"/api/inboxes/{id}/messages/{messageId}", "delete">;
  };
  attachments: {
    /** An attachment's bytes and content type; rejects with `InboxServiceError` otherwise. */
    get(inboxId: string, messageId: string, attachmentId: string): Promise<AttachmentContent>;
  };
  events: {
    /** A page of the account's event log, oldest first; pass `nextCursor` as `after` to read on. */
    list(query?: EventListQuery): ApiResult<"/api/events", "get">;
    /**
     * The account's events as they are committed, as an async iterator. A
     * dropped connection is resumed with `Last-Event-ID`, so nothing is lost
     * or repeated; a try that fails (no answer, a 5xx) is repeated after a
     * growing pause (`retryMs` doubling up to `maxRetryMs`), for as long as
     * it takes; `onOpen` and `onRetry` report each connection and each retry.
     * It ends when `signal` aborts or the loop breaks, and throws
     * `InboxServiceError` on a 4xx answer (a refused key: 401).
     */
    stream(options?: EventStreamOptions): AsyncGenerator<Event>;
  };
  /** Operator calls; they need `adminToken`. */
  admin: {
    /** The account with this email (ignoring case): `data` holds it, or nothing. */
    findAccounts(email: string): ApiResult<"/admin/accounts", "get">;
    createAccount(body: Schemas["AdminAccountCreateRequest"]): ApiResult<"/admin/accounts", "post">;
    updateAccount(
      accountId: string,
      body: Schemas["AdminAccountUpdateRequest"],
    ): ApiResult<"/admin/accounts/{id}", "patch">;
  };
  /** Liveness: 200 while the process runs. */
  health(): ApiResult<"/healthz", "get">;
  /** Readiness: 200 when the database answers, 503 (as `error`) otherwise. */
  ready(): ApiResult<"/readyz", "get">;
}

/**
 * Creates a client. Every wrapper is one openapi-fetch call; `raw` gives the
 * untyped-path escape hatch. Throws `MissingApiKeyError` for an `apiKey`
 * option that holds no key.
 */
export function createClient(options: ClientOptions): InboxServiceClient {
  if ("apiKey" in options && (typeof options.apiKey !== "string" || options.apiKey.trim() === "")) {
    throw new MissingApiKeyError();
  }
  const baseUrl = options.baseUrl.replace(/\/+$/, "");
  const raw: Client<paths> = createFetchClient<paths>({
    baseUrl: baseUrl,
    ...(options.fetch ? { fetch: options.fetch } : {}),
    ...(options.headers ? { headers: options.headers } : {}),
  });
  let cookie = options.cookie;

  // Credentials are set here rather than as default headers so that /admin
  // calls carry the operator token and nothing else.
  const credentials: Middleware = {
    onRequest({ request, schemaPath }) {
      if (schemaPath.startsWith("/admin/")) {
        if (options.adminToken) request.headers.set("authorization", `Bearer ${options.adminToken}`);
        return request;
      }
      if (options.apiKey && !request.headers.has("authorization")) {
        request.headers.set("authorization", `Bearer ${options.apiKey}`);
      }
      if (cookie && !request.headers.has("cookie")) request.headers.set("cookie", cookie);
      return request;
    },
    onResponse({ response, schemaPath }) {
      if (SESSION_PATHS.has(schemaPath) && response.ok) cookie = sessionCookie(response) ?? cookie;
      if (schemaPath === "/api/auth/logout" && response.ok) cookie = undefined;
      return undefined;
    },
  };
  raw.use(credentials);

  const id = (value: string) => ({ path: { id: value } });

  // One connection after another, each resuming after the last event yielded.
  async function* streamEvents(options: EventStreamOptions = {}): AsyncGenerator<Event> {
    const { signal, retryMs = 1_000, maxRetryMs = 5_000, connectTimeoutMs = 10_000, types, onOpen, onRetry } = options;
    const url = `${baseUrl}/api/events/stream`;
    let last = options.after;
    let failures = 0;
    // Reports what went wrong and waits: `retryMs` after a drop, doubling with each failed try in a row.
    const retry = async (error: unknown, dropped: boolean) => {
      failures = dropped ? 0 : failures + 1;
      const delayMs = dropped ? retryMs : Math.min(retryMs * 2 ** (failures - 1), maxRetryMs);
      onRetry?.({ url, error, dropped, failures, delayMs });
      await pause(delayMs, signal);
    };
    while (!signal?.aborted) {
      // The try's own signal: the caller's, and the connect timeout until the headers are in.
      const attempt = new AbortController();
      const stop = () => attempt.abort(signal?.reason);
      signal?.addEventListener("abort", stop, { once: true });
      const detach = () => signal?.removeEventListener("abort", stop);
      const timer = setTimeout(
        () => attempt.abort(new Error(`no answer within ${connectTimeoutMs} ms`)),
        connectTimeoutMs,
      );
      let body: ReadableStream<Uint8Array> | undefined;
      let failure: unknown;
      try {
        const { error, response } = await raw.GET("/api/events/stream", {
          params: {
            query: { types: types?.join(",") },
            header: last === undefined ? {} : { "Last-Event-ID": last },
          },
          parseAs: "stream",
          signal: attempt.signal,
        });
        if (response.ok) body = response.body ?? undefined;
        // A 5xx is the service (or a proxy before it) not ready yet; a 4xx will not change by trying again.
        else if (response.status >= 500) failure = new InboxServiceError(response.status, errorBody(error));
        else throw new InboxServiceError(response.status, errorBody(error));
      } catch (err) {
        detach();
        if (signal?.aborted) return;
        if (err instanceof InboxServiceError) throw err;
        failure = attempt.signal.aborted ? attempt.signal.reason : err;
      } finally {
        clearTimeout(timer);
      }
      if (failure !== undefined) {
        detach();
        await retry(failure, false);
        continue;
      }
      try {
        onOpen?.({ url, after: last, failures });
        failures = 0;
        if (body) {
          for await (const message of readSse(body)) {
            const event = JSON.parse(message.data) as Event;
            last = message.id ?? event.id;
            yield event;
          }
        }
        if (signal?.aborted) return;
        await retry(new StreamDroppedError("the service ended the stream"), true);
      } catch (err) {
        if (signal?.aborted) return;
        if (err instanceof SyntaxError) throw err;
        // The connection dropped mid-stream: resume after the last event.
        await retry(err, true);
      } finally {
        detach();
      }
    }
  }

  // One long poll after another until a message comes or the caller's own timeout runs out.
  async function waitFor(inboxId: string, options: WaitForOptions = {}): Promise<Message> {
    const { timeoutMs = DEFAULT_WAIT_MS, signal, since, ...filters } = options;
    const deadline = Date.now() + timeoutMs;
    while (true) {
      const hold = Math.max(0, Math.min(deadline - Date.now(), MAX_HOLD_MS));
      const { data, error, response } = await raw.GET("/api/inboxes/{id}/messages/wait", {
        params: { path: { id: inboxId }, query: { ...filters, since: isoOf(since), timeoutMs: String(hold) } },
        ...(signal ? { signal } : {}),
      });
      if (response.status === 200 && data) return data;
      if (response.status !== 204) throw new InboxServiceError(response.status, errorBody(error));
      if (Date.now() >= deadline) throw new WaitTimeoutError(inboxId, timeoutMs);
    }
  }

  return {
    /** The openapi-fetch client (typed by path), sharing credentials and middleware. */
    raw,
    /** Adds openapi-fetch middleware (logging, retries, recording). */
    use: (...middleware: Middleware[]) => raw.use(...middleware),
    /** The current session cookie, if any. */
    get cookie(): string | undefined {
      return cookie;
    },

    auth: {
      /** Creates a free account and keeps its session cookie. */
      register: (body: Credentials) => raw.POST("/api/auth/register", { body }),
      /** Starts a session and keeps its cookie. */
      login: (body: Credentials) => raw.POST("/api/auth/login", { body }),
      /** Ends the session and forgets the cookie. */
      logout: () => raw.POST("/api/auth/logout"),
    },
    /** The account of the credential in use. */
    me: () => raw.GET("/api/me"),

    apiKeys: {
      create: (body: Schemas["ApiKeyCreateRequest"]) => raw.POST("/api/api-keys", { body }),
      list: () => raw.GET("/api/api-keys"),
      delete: (keyId: string) => raw.DELETE("/api/api-keys/{id}", { params: id(keyId) }),
    },

    webhooks: {
      list: () => raw.GET("/api/user-webhooks"),
      create: (body: WebhookCreateRequest) => raw.POST("/api/user-webhooks", { body }),
      get: (webhookId: string) => raw.GET("/api/user-webhooks/{id}", { params: id(webhookId) }),
      update: (webhookId: string, body: WebhookUpdateRequest) =>
        raw.PATCH("/api/user-webhooks/{id}", { params: id(webhookId), body }),
      delete: (webhookId: string) => raw.DELETE("/api/user-webhooks/{id}", { params: id(webhookId) }),
      /** Sends a signed `test` event now and reports the receiver's answer. */
      test: (webhookId: string) => raw.POST("/api/user-webhooks/{id}/test", { params: id(webhookId) }),
      rotateSecret: (webhookId: string, body: WebhookSecretRotateRequest = {}) =>
        raw.POST("/api/user-webhooks/{id}/rotate-secret", { params: id(webhookId), body }),
    },

    deliveries: {
      list: (webhookId: string, query: PageQuery = {}) =>
        raw.GET("/api/user-webhooks/{id}/deliveries", { params: { path: { id: webhookId }, query } }),
      redeliver: (webhookId: string, deliveryId: string) =>
        raw.POST("/api/user-webhooks/{id}/deliveries/{deliveryId}/redeliver", {
          params: { path: { id: webhookId, deliveryId } },
        }),
      recover: (webhookId: string, body: RecoverOptions) =>
        raw.POST("/api/user-webhooks/{id}/recover", {
          params: id(webhookId),
          body: { ...body, since: isoOf(body.since)!, until: isoOf(body.until) },
        }),
    },

    inboxes: {
      create: (body: InboxCreateRequest = {}) => raw.POST("/api/inboxes", { body }),
      list: (query: PageQuery = {}) => raw.GET("/api/inboxes", { params: { query } }),
      get: (inboxId: string) => raw.GET("/api/inboxes/{id}", { params: id(inboxId) }),
      delete: (inboxId: string) => raw.DELETE("/api/inboxes/{id}", { params: id(inboxId) }),
    },

    messages: {
      list: (inboxId: string, query: PageQuery & MessageFilter = {}) =>
        raw.GET("/api/inboxes/{id}/messages", {
          params: { path: { id: inboxId }, query: { ...query, since: isoOf(query.since) } },
        }),
      get: (inboxId: string, messageId: string) =>
        raw.GET("/api/inboxes/{id}/messages/{messageId}", { params: { path: { id: inboxId, messageId } } }),
      waitFor,
      expectNone: async (inboxId: string, options: ExpectNoneOptions) => {
        const { withinMs, ...rest } = options;
        try {
          const message = await waitFor(inboxId, { ...rest, timeoutMs: withinMs });
          throw new UnexpectedMessageError(message);
        } catch (err) {
          if (err instanceof WaitTimeoutError) return;
          throw err;
        }
      },
      raw: async (inboxId: string, messageId: string) => {
        const { data, error, response } = await raw.GET("/api/inboxes/{id}/messages/{messageId}/raw", {
          params: { path: { id: inboxId, messageId } },
          parseAs: "arrayBuffer",
        });
        if (!response.ok || data === undefined) throw new InboxServiceError(response.status, errorBody(error));
        return new Uint8Array(data as unknown as ArrayBuffer);
      },
      delete: (inboxId: string, messageId: string) =>
        raw.DELETE("/api/inboxes/{id}/messages/{messageId}", { params: { path: { id: inboxId, messageId } } }),
    },

    attachments: {
      get: async (inboxId: string, messageId: string, attachmentId: string) => {
        const { data, error, response } = await raw.GET(
          "/api/inboxes/{id}/messages/{messageId}/attachments/{attachmentId}",
          { params: { path: { id: inboxId, messageId, attachmentId } }, parseAs: "arrayBuffer" },
        );
        if (!response.ok || data === undefined) throw new InboxServiceError(response.status, errorBody(error));
        return {
          content: new Uint8Array(data as unknown as ArrayBuffer),
          contentType: response.headers.get("content-type") ?? "application/octet-stream",
        };
      },
    },

    events: {
      list: (query: EventListQuery = {}) =>
        raw.GET("/api/events", {
          params: { query: { ...query, types: query.types?.join(",") } },
        }),
      stream: streamEvents,
    },

    /** Operator calls; they need `adminToken`. */
    admin: {
      findAccounts: (email: string) => raw.GET("/admin/accounts", { params: { query: { email } } }),
      createAccount: (body: Schemas["AdminAccountCreateRequest"]) => raw.POST("/admin/accounts", { body }),
      updateAccount: (accountId: string, body: Schemas["AdminAccountUpdateRequest"]) =>
        raw.PATCH("/admin/accounts/{id}", { params: id(accountId), body }),
    },

    /** Liveness: 200 while the process runs. */
    health: () => raw.GET("/healthz"),
    /** Readiness: 200 when the database answers, 503 (as `error`) otherwise. */
    ready: () => raw.GET("/readyz"),
  };
}
