/** Waiting in tests that watch something happen in real time (processes, receivers). */

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/**
 * Polls `condition` every 50 ms until it holds; throws with `what()` after
 * `timeoutMs`. With `DEBUG_WAIT` set, prints `what()` every 5 s meanwhile.
 */
export async function waitUntil(
  condition: () => boolean | Promise<boolean>,
  timeoutMs: number,
  what: () => string | Promise<string>,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let report = Date.now() + 5_000;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting: ${await what()}`);
    if (Date.now() > report && Deno.env.get("DEBUG_WAIT")) {
      console.log("waiting:", await what());
      report = Date.now() + 5_000;
    }
    await sleep(50);
  }
}
