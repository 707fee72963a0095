/**
 * Per-minute request limits of the delivery operations that make the service
 * send (the test endpoint) or queue (redelivery) requests to a receiver, per
 * account and plan: without them one account could turn the service into a
 * request cannon aimed at any receiver it registered. Free has no webhooks,
 * so no allowance (its 403 comes first).
 */
import type { PlanLimits } from "../rate_limit/middleware.ts";

/** Requests per account and minute, by plan. */
export const DELIVERY_RATE_LIMITS = {
  /** `POST /api/user-webhooks/{id}/test`: each is a synchronous delivery of up to 10 s. */
  test: { pro: 10, business: 30 },
  /** `POST /api/user-webhooks/{id}/deliveries/{deliveryId}/redeliver`: each queues an attempt. */
  redeliver: { pro: 30, business: 100 },
} as const satisfies Record<string, PlanLimits>;

/** The policy names in the RateLimit headers (and the limiter's buckets). */
export const DELIVERY_RATE_POLICIES = { test: "webhook-test", redeliver: "webhook-redeliver" } as const;
