/** The `session` cookie: HttpOnly, SameSite=Lax, Secure unless configured off. */
import type { Context } from "hono";
import { deleteCookie, getCookie, setCookie } from "hono/cookie";

export const SESSION_COOKIE = "session";

/** Sets the session cookie. */
export function setSessionCookie(c: Context, token: string, secure: boolean, ttlDays: number): void {
  setCookie(c, SESSION_COOKIE, token, {
    httpOnly: true,
    sameSite: "Lax",
    secure,
    path: "/",
    maxAge: ttlDays * 86_400,
  });
}

/** Clears the session cookie. */
export function clearSessionCookie(c: Context, secure: boolean): void {
  deleteCookie(c, SESSION_COOKIE, { path: "/", secure, httpOnly: true, sameSite: "Lax" });
}

/** The session token the request carries, if any. */
export function readSessionCookie(c: Context): string | undefined {
  const value = getCookie(c, SESSION_COOKIE);
  return value && value.length <= 128 ? value : undefined;
}

/** Whether the request carries a session cookie at all, well-formed or not (which 401 hint applies). */
export function hasSessionCookie(c: Context): boolean {
  return getCookie(c, SESSION_COOKIE) !== undefined;
}
