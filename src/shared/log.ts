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
