/**
 * Logging through LogTape: structured JSON lines on stdout. Library code only
 * calls `getLogger([...])`; the entry point configures sinks once.
 *
 * Implicit contexts (`withContext`) carry the request id of an HTTP request
 * and the delivery and webhook ids of a delivery onto every line written on
 * their behalf, however deep the call.
 */
import { AsyncLocalStorage } from "node:async_hooks";
import { configure, getConsoleSink, jsonLinesFormatter, type LogLevel, type Sink } from "@logtape/logtape";

/**
 * Runs `fn` outside every log context. Taken when this module loads, outside
 * any request: work that a request only wakes (the delivery queue's timers)
 * runs through it, so that it does not carry that request's id.
 */
export const withoutContext: <R>(fn: () => R) => R = AsyncLocalStorage.snapshot();

/** Configures logging for the process: JSON lines, or the given sink (tests). */
export async function setupLogging(level: LogLevel, sink?: Sink): Promise<void> {
  await configure({
    reset: true,
    contextLocalStorage: new AsyncLocalStorage(),
    sinks: { main: sink ?? getConsoleSink({ formatter: jsonLinesFormatter }) },
    loggers: [
      { category: ["inbox"], lowestLevel: level, sinks: ["main"] },
      { category: ["logtape", "meta"], lowestLevel: "warning", sinks: ["main"] },
    ],
  });
}
