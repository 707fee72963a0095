/** HTTP layer of messages: every plan, free included. */
import { createRoute, type OpenAPIHono, z } from "@hono/zod-openapi";
import { securityOf } from "../auth/scopes.ts";
import type { AppEnv } from "../http/env.ts";
import type { Config } from "../config.ts";
import { unauthorized } from "../errors.ts";
import { UNAUTHORIZED_HINTS } from "../auth/hints.ts";
import type { Revocations } from "../auth/revocations.ts";
import { MESSAGE_WAITS, type OpenRequests } from "../rate_limit/open_requests.ts";
import { createRouter } from "../http/router.ts";
import { NoStoreHeaders } from "../http/security_headers.ts";
import { errorResponses, jsonResponse, SuccessSchema } from "../http/schemas.ts";
import {
  AttachmentParamsSchema,
  MessageListQuerySchema,
  MessageListSchema,
  MessageParamsSchema,
  MessageSchema,
  MessageWaitQuerySchema,
  toMessageJson,
  toMessageSummaryJson,
} from "./schemas.ts";
import { IdParamSchema } from "../http/schemas.ts";
import {
  deleteMessage,
  getAttachment,
  getMessage,
  getRawMessage,
  listMessages,
  type MessageDeps,
  waitForMessage,
} from "./service.ts";

const listMessagesRoute = createRoute({
  method: "get",
  path: "/api/inboxes/{id}/messages",
  request: { params: IdParamSchema, query: MessageListQuerySchema },
  responses: {
    200: { ...jsonResponse("A page of messages", MessageListSchema), headers: NoStoreHeaders },
    ...errorResponses(400, 401, 403, 404),
  },
  security: securityOf("GET /api/inboxes/{id}/messages"),
});

const waitRoute = createRoute({
  method: "get",
  path: "/api/inboxes/{id}/messages/wait",
  request: { params: IdParamSchema, query: MessageWaitQuerySchema },
  responses: {
    200: { ...jsonResponse("The earliest matching message after the cursor", MessageSchema), headers: NoStoreHeaders },
    204: { description: "Nothing matched within timeoutMs", headers: NoStoreHeaders },
    ...errorResponses(400, 401, 403, 404, 429),
  },
  security: securityOf("GET /api/inboxes/{id}/messages/wait"),
});

const getMessageRoute = createRoute({
  method: "get",
  path: "/api/inboxes/{id}/messages/{messageId}",
  request: { params: MessageParamsSchema },
  responses: {
    200: { ...jsonResponse("The message", MessageSchema), headers: NoStoreHeaders },
    ...errorResponses(401, 403, 404),
  },
  security: securityOf("GET /api/inboxes/{id}/messages/{messageId}"),
});

const deleteMessageRoute = createRoute({
  method: "delete",
  path: "/api/inboxes/{id}/messages/{messageId}",
  request: { params: MessageParamsSchema },
  responses: { 200: jsonResponse("Message deleted", SuccessSchema), ...errorResponses(401, 403, 404) },
  security: securityOf("DELETE /api/inboxes/{id}/messages/{messageId}"),
});

const rawRoute = createRoute({
  method: "get",
  path: "/api/inboxes/{id}/messages/{messageId}/raw",
  request: { params: MessageParamsSchema },
  responses: {
    200: {
      description: "The message exactly as received",
      headers: NoStoreHeaders,
      content: { "message/rfc822": { schema: z.string().openapi({ format: "binary" }) } },
    },
    ...errorResponses(401, 403, 404),
  },
  security: securityOf("GET /api/inboxes/{id}/messages/{messageId}/raw"),
});

const attachmentRoute = createRoute({
  method: "get",
  path: "/api/inboxes/{id}/messages/{messageId}/attachments/{attachmentId}",
  request: { params: AttachmentParamsSchema },
  responses: {
    200: {
      description: "The attachment's contents, with its content type",
      headers: NoStoreHeaders,
      content: { "application/octet-stream": { schema: z.string().openapi({ format: "binary" }) } },
    },
    ...errorResponses(401, 403, 404),
  },
  security: securityOf("GET /api/inboxes/{id}/messages/{messageId}/attachments/{attachmentId}"),
});

/** A media type safe to send back as Content-Type; anything else is served as bytes. */
const MEDIA_TYPE = /^[a-z0-9][a-z0-9!#$&^_.+-]{0,126}\/[a-z0-9][a-z0-9!#$&^_.+-]{0,126}$/i;

/**
 * `attachment` with the filename (RFC 6266): an ASCII fallback in `filename`
 * and the exact name, percent-encoded, in `filename*` when it is not plain ASCII.
 */
export function contentDisposition(filename: string | null): string {
  if (filename === null || filename === "") return "attachment";
  // Quotes, backslashes, control characters and path separators have no place in a quoted fallback.
  const fallback = filename.replace(/[^\x20-\x7e]|["\\/]/g, "_");
  if (fallback === filename) return `attachment; filename="${fallback}"`;
  const encoded = encodeURIComponent(filename).replace(
    /['()*]/g,
    (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`,
  );
  return `attachment; filename="${fallback}"; filename*=UTF-8''${encoded}`;
}

/** The message routes; `/api` authentication is applied by the app. */
export function messageRoutes(
  deps: MessageDeps & {
    openRequests: Pick<OpenRequests, "open">;
    revocations: Pick<Revocations, "hold">;
    config: Pick<Config, "messageWaitsPerAccount">;
  },
): OpenAPIHono<AppEnv> {
  const app = createRouter();
  // The wait is registered before `{messageId}` so that `wait` is never read as a message id.
  return app.openapi(waitRoute, async (c) => {
    const { id } = c.req.valid("param");
    const query = c.req.valid("query");
    const principal = c.get("principal");
    const { accountId, credential } = principal;
    // A wait whose key is revoked (or whose session ends) meanwhile answers 401, on whichever instance it is.
    const credentialHold = deps.revocations.hold(credential);
    let message;
    try {
      message = await waitForMessage(
        deps,
        principal,
        id,
        query,
        AbortSignal.any([c.req.raw.signal, credentialHold.signal]),
        () => deps.openRequests.open(accountId, MESSAGE_WAITS, deps.config.messageWaitsPerAccount),
      );
      if (credentialHold.signal.aborted) throw unauthorized(UNAUTHORIZED_HINTS.credentialEnded);
    } finally {
      credentialHold.release();
    }
    if (!message) return c.body(null, 204);
    return c.json(toMessageJson(message), 200);
  }).openapi(listMessagesRoute, async (c) => {
    const { id } = c.req.valid("param");
    const page = await listMessages(deps, c.get("principal"), id, c.req.valid("query"));
    return c.json({ data: page.data.map(toMessageSummaryJson), nextCursor: page.nextCursor }, 200);
  }).openapi(getMessageRoute, async (c) => {
    const { id, messageId } = c.req.valid("param");
    return c.json(toMessageJson(await getMessage(deps, c.get("principal"), id, messageId)), 200);
  }).openapi(deleteMessageRoute, async (c) => {
    const { id, messageId } = c.req.valid("param");
    await deleteMessage(deps, c.get("principal"), id, messageId);
    return c.json({ success: true as const }, 200);
  }).openapi(rawRoute, async (c) => {
    const { id, messageId } = c.req.valid("param");
    const raw = await getRawMessage(deps, c.get("principal"), id, messageId);
    return c.body(raw, 200, { "content-type": "message/rfc822" });
  }).openapi(attachmentRoute, async (c) => {
    const { id, messageId, attachmentId } = c.req.valid("param");
    const { meta, content } = await getAttachment(deps, c.get("principal"), id, messageId, attachmentId);
    return c.body(content, 200, {
      "content-type": MEDIA_TYPE.test(meta.contentType) ? meta.contentType : "application/octet-stream",
      "content-disposition": contentDisposition(meta.filename),
      // Never rendered as a page of this origin, whatever the sender called it.
      "x-content-type-options": "nosniff",
      "content-security-policy": "sandbox",
    });
  });
}
