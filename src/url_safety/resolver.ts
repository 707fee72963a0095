/**
 * Name resolution for the webhook URL checks, injectable so tests never need
 * DNS. A resolver never throws: failure and timeout both mean "no addresses".
 */
import { lookup as dnsLookup } from "node:dns/promises";
import { withTimeout } from "../shared/with_timeout.ts";

/** Resolves a host name to its A and AAAA addresses; [] when there are none. */
export type Resolver = (hostname: string) => Promise<string[]>;

const DEFAULT_TIMEOUT_MS = 2000;

/** Wraps a resolver so that it cannot throw and gives up with [] after `timeoutMs`. */
export function guardResolver(
  resolver: Resolver,
  timeoutMs: number = DEFAULT_TIMEOUT_MS,
): Resolver {
  return (hostname) =>
    withTimeout(
      // Promise.resolve().then() also catches a resolver that throws
      // synchronously instead of rejecting.
      Promise.resolve().then(() => resolver(hostname)).catch(() => []),
      timeoutMs,
      () => [],
    );
}

/**
 * The system resolver: getaddrinfo through node:dns, as any client on the
 * host would resolve (so /etc/hosts counts, unlike a raw DNS query), giving
 * [] after `timeoutMs` (default 2 s).
 */
export function systemResolver(timeoutMs: number = DEFAULT_TIMEOUT_MS): Resolver {
  return guardResolver(async (hostname) => {
    const answers = await dnsLookup(hostname, { all: true, verbatim: true });
    return answers.map((a) => a.address);
  }, timeoutMs);
}
