/**
 * The one way a feature makes its router: an OpenAPIHono whose refused
 * requests get the documented 400, and whose mutating operations refuse
 * non-JSON bodies.
 */
import { OpenAPIHono, type RouteConfig } from "@hono/zod-openapi";
import type { MiddlewareHandler } from "hono";
import type { AppEnv } from "./env.ts";
import { jsonOnly } from "./json_only.ts";
import { errorResponses } from "./schemas.ts";
import { type MessageFor, validationHook } from "./validation.ts";

const MUTATING_METHODS: ReadonlySet<string> = new Set(["post", "put", "patch", "delete"]);

/**
 * A mutating operation (POST, PUT, PATCH, DELETE) with the 415 check as its
 * last middleware, whether or not it reads a body: a cross-site form post
 * (text, form or multipart) must never reach a handler, even one that ignores
 * the body. As route middleware it runs after everything the feature mounted
 * before the operation (authentication, plan, rate limit: 401 -> 403 -> 429)
 * and before validation (400), and its 415 is added to the documented
 * responses unless the route states its own. Other methods are left as they are.
 */
export function refuseNonJsonBodies<R extends RouteConfig>(route: R): R {
  if (!MUTATING_METHODS.has(route.method)) return route;
  const own: MiddlewareHandler[] = route.middleware === undefined
    ? []
    : Array.isArray(route.middleware)
    ? route.middleware
    : [route.middleware as MiddlewareHandler];
  return {
    ...route,
    middleware: [...own, jsonOnly()],
    responses: { ...errorResponses(415), ...route.responses },
  };
}

/** A router for a feature's routes, optionally with its own validation message. */
export function createRouter(messageFor?: MessageFor): OpenAPIHono<AppEnv> {
  const router = new OpenAPIHono<AppEnv>({ defaultHook: validationHook(messageFor) });
  // `openapi` is an instance field (not a prototype method), so it is wrapped
  // here rather than overridden in a subclass; every feature registers its
  // operations through it, so none can miss the check.
  const register = router.openapi;
  router.openapi =
    ((route: RouteConfig, ...rest: [never, never]) => register(refuseNonJsonBodies(route), ...rest)) as typeof register;
  return router;
}
