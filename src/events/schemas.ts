/**
 * Event types and the data each carries (design: "Event data"), taken from
 * the `webhooks:` section of openapi.yaml through the generated types, so
 * what is emitted cannot drift from what receivers are told to expect.
 */
import type { components } from "../../generated/api.d.ts";
import type { EventType } from "../webhooks/schemas.ts";

type Schemas = components["schemas"];

export type InboxCreatedData = Schemas["InboxCreatedData"];
export type InboxExpiredData = Schemas["InboxExpiredData"];
export type MessageReceivedData = Schemas["MessageReceivedData"];
export type TestData = Schemas["TestData"];

/** The data of each subscribable event type. */
export interface EventDataMap {
  "message.received": MessageReceivedData;
  "inbox.created": InboxCreatedData;
  "inbox.expired": InboxExpiredData;
}

/** The body of every delivery: `id` is the same on every retry. */
export interface EventEnvelope<T extends string = string, D = unknown> {
  id: string;
  type: T;
  createdAt: string;
  data: D;
}

export type { EventType };
