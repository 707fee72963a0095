/**
 * One way to bound a wait: race a promise against a timer, and always clear
 * the timer, whichever side wins (a timer left behind keeps the process
 * alive and trips Deno's test sanitizers).
 */

/**
 * Settles like `promise` if it settles within `ms`; otherwise resolves with
 * `onTimeout()` (or rejects with what it throws). The promise itself is not
 * cancelled: whatever it does later is ignored, a late rejection included.
 */
export function withTimeout<T>(promise: PromiseLike<T>, ms: number, onTimeout: () => T): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<T>((resolve, reject) => {
    timer = setTimeout(() => {
      try {
        resolve(onTimeout());
      } catch (err) {
        reject(err);
      }
    }, ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}
