/** Body checks every mutating route runs after authentication, plan and rate checks. */
import { bodySize } from "./body_size.ts";
import { jsonOnly } from "./json_only.ts";

/** 415 for non-JSON bodies, then 413 for bodies over `maxBodyBytes`. */
export function bodyGuards(maxBodyBytes: number) {
  return [jsonOnly(), bodySize(maxBodyBytes)] as const;
}
