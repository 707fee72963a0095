/**
 * Logging through LogTape: structured JSON lines on stdout. Library code only
 * calls `getLogger([...])`; the entry point configures sinks once.
 */
import { configure, getConsoleSink, jsonLinesFormatter, type LogLevel, type Sink } from "@logtape/logtape";

/** Configures logging for the process: JSON lines, or the given sink (tests). */
export async function setupLogging(level: LogLevel, sink?: Sink): Promise<void> {
  await configure({
    reset: true,
    sinks: { main: sink ?? getConsoleSink({ formatter: jsonLinesFormatter }) },
    loggers: [
      { category: ["inbox"], lowestLevel: level, sinks: ["main"] },
      { category: ["logtape", "meta"], lowestLevel: "warning", sinks: ["main"] },
    ],
  });
}
