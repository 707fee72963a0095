/**
 * Per-minute request limits of the delivery operations that make the service
 * send (the test endpoint: a synchronous delivery of up to 10 s) or queue
 * (redelivery) requests to a receiver, per account: without them one account
 * could turn the service into a request cannon aimed at any receiver it
 * registered. The numbers per plan are configuration (WEBHOOK_TESTS_PER_MINUTE,
 * REDELIVERIES_PER_MINUTE); Free has no webhooks, so no allowance (its 403
 * comes first).
 */

/** The policy names in the RateLimit headers (and the limiter's buckets). */
export const DELIVERY_RATE_POLICIES = { test: "webhook-test", redeliver: "webhook-redeliver" } as const;
