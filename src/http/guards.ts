/** Body checks every mutating route runs after authentication, plan and rate checks. */
import type { AppDeps } from "../deps.ts";
import { bodySize } from "./body_size.ts";
import { jsonOnly } from "./json_only.ts";

/** 415 for non-JSON bodies, then 413 for oversized ones. */
export function bodyGuards(deps: AppDeps) {
  return [jsonOnly(), bodySize(deps.config.maxBodyBytes)] as const;
}
