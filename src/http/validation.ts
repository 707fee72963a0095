/**
 * The `defaultHook` of every OpenAPIHono router: a refused request becomes a
 * 400 with the documented error body and a `details` entry per problem.
 */
import type { Hook } from "@hono/zod-openapi";
import type { z } from "zod";
import { ApiError, type ErrorDetail } from "../errors.ts";
import type { AppEnv } from "./env.ts";

type Target = "json" | "query" | "param" | "header" | "cookie" | "form";

const DEFAULT_MESSAGES: Record<string, string> = {
  json: "Invalid request body",
  query: "Invalid query parameters",
  param: "Invalid path parameters",
};

/** Chooses a message for a refused request; `undefined` keeps the default. */
export type MessageFor = (details: ErrorDetail[], target: Target) => string | undefined;

/** Turns zod issues into the `details` of the error body. */
export function issuesToDetails(issues: readonly z.core.$ZodIssue[]): ErrorDetail[] {
  const details: ErrorDetail[] = [];
  for (const issue of issues) {
    const base = issue.path.map(String).join(".");
    if (issue.code === "unrecognized_keys") {
      for (const key of issue.keys) {
        details.push({ path: base ? `${base}.${key}` : key, message: "Unknown field" });
      }
    } else {
      details.push({ path: base, message: issue.message });
    }
  }
  return details;
}

/** Builds the validation hook, optionally with a route family's own message. */
export function validationHook(messageFor?: MessageFor): Hook<unknown, AppEnv, string, unknown> {
  return (result) => {
    if (result.success) return;
    const target = (result as { target?: Target }).target ?? "json";
    const details = issuesToDetails((result.error as z.ZodError).issues);
    const message = messageFor?.(details, target) ?? DEFAULT_MESSAGES[target] ?? "Invalid request";
    throw new ApiError(400, "VALIDATION_ERROR", message, details);
  };
}
