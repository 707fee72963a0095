/** Shared set-up of the message tests: real mail over SMTP into the harness, and the wait over real HTTP. */
import { Buffer } from "node:buffer";
// @ts-types="npm:@types/nodemailer@8.0.2"
import nodemailer from "npm:nodemailer@10.6.0";
import { type Api, metricValue, type User } from "../_helpers/app.ts";

/** A message as a test sends it (nodemailer builds the MIME). */
export interface TestMail {
  to: string;
  from?: string;
  subject: string;
  text?: string;
  html?: string;
  attachments?: { filename: string; content: string | Uint8Array; contentType?: string }[];
}

/** Sends one message over a new SMTP connection to the listener on `port`; resolves once the server said 250. */
export async function sendMail(port: number, mail: TestMail): Promise<void> {
  const transport = nodemailer.createTransport({ host: "127.0.0.1", port, secure: false, ignoreTLS: true });
  try {
    await transport.sendMail({
      from: mail.from ?? "Sender <sender@example.com>",
      to: mail.to,
      subject: mail.subject,
      ...(mail.text !== undefined ? { text: mail.text } : {}),
      ...(mail.html !== undefined ? { html: mail.html } : {}),
      ...(mail.attachments
        ? {
          attachments: mail.attachments.map((a) => ({
            filename: a.filename,
            content: typeof a.content === "string" ? a.content : Buffer.from(a.content),
            ...(a.contentType ? { contentType: a.contentType } : {}),
          })),
        }
        : {}),
    });
  } finally {
    transport.close();
  }
}

/** GET .../messages/wait with a query; the response, unread. */
export function waitRequest(
  app: Api,
  user: User,
  inboxId: string,
  query: Record<string, string> = {},
  signal?: AbortSignal,
): Promise<Response> {
  const qs = new URLSearchParams(query).toString();
  return app.request(`/api/inboxes/${inboxId}/messages/wait${qs ? `?${qs}` : ""}`, {
    cookie: user.cookie,
    ...(signal ? { signal } : {}),
  });
}

/** The value of the `inbox_message_waiters` gauge on the app's /metrics. */
export function waitersGauge(app: Api): Promise<number> {
  return metricValue(app.baseUrl, "inbox_message_waiters");
}
