/**
 * The physical limit for the API benchmark: a bare Deno.serve + postgres.js
 * handler running the same list query as GET /api/user-webhooks (src/webhooks/repo.ts
 * `listWebhooks`: the list form's seven columns), with no framework, no
 * authentication and no validation.
 *
 *   deno run -A tests/bench/bare_server.ts <port> <database url> <account id>
 */
import postgres from "postgres";

/** The bare handler: the list of `accountId`'s webhooks on `sql` (camel-case columns), as the API's JSON. */
export function bareList(sql: postgres.Sql, accountId: string): (req: Request) => Promise<Response> {
  return async () => {
    const rows = await sql`
      SELECT id, url, events, active, failure_count, last_triggered_at, created_at
      FROM webhooks WHERE account_id = ${accountId} ORDER BY created_at, id`;
    return Response.json(rows.map((w) => ({
      id: w.id,
      url: w.url,
      events: w.events,
      active: w.active,
      failureCount: w.failureCount,
      lastTriggeredAt: w.lastTriggeredAt?.toISOString() ?? null,
      createdAt: w.createdAt.toISOString(),
    })));
  };
}

if (import.meta.main) {
  const [port, url, accountId] = Deno.args;
  const sql = postgres(url!, { max: 10, transform: postgres.camel, onnotice: () => {} });
  Deno.serve(
    { hostname: "127.0.0.1", port: Number(port), onListen: () => console.log("ready") },
    bareList(sql, accountId!),
  );
}
