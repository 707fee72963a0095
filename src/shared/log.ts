/**
 * Logging through LogTape. Library code only calls `getLogger([...])`; the
 * entry point configures sinks once, in one of two formats (LOG_FORMAT):
 * `json`, one JSON object per line for a log collector, or `pretty`, lines a
 * person reads in a terminal. Both are LogTape's own formatters.
 *
 * Implicit contexts (`withContext`) carry the request id of an HTTP request
 * and the delivery and webhook ids of a delivery onto every line written on
 * their behalf, however deep the call.
 */
import { AsyncLocalStorage } from "node:async_hooks";
import {
  configure,
  type FormattedValues,
  getAnsiColorFormatter,
  getConsoleSink,
  getTextFormatter,
  jsonLinesFormatter,
  type LogLevel,
  type Sink,
  type TextFormatter,
} from "@logtape/logtape";
import type { LogFormat } from "../config.ts";

/**
 * Runs `fn` outside every log context. Taken when this module loads, outside
 * any request: work that a request only wakes (the delivery queue's timers)
 * runs through it, so that it does not carry that request's id.
 */
export const withoutContext: <R>(fn: () => R) => R = AsyncLocalStorage.snapshot();

/**
 * The properties a message does not show, as ` key=value`: the context ids
 * (request, delivery, webhook), without which a line in a terminal could not
 * be tied to what it was written for.
 */
function unshownProperties(values: FormattedValues): string {
  const { rawMessage, properties } = values.record;
  const template = typeof rawMessage === "string" ? rawMessage : rawMessage.join("");
  return Object.entries(properties)
    .filter(([key, value]) => !template.includes(`{${key}}`) && value !== undefined)
    .map(([key, value]) => ` ${key}=${typeof value === "string" ? value : JSON.stringify(value)}`)
    .join("");
}

/** `12:34:56.789 INF inbox·main: Listening on http://0.0.0.0:8000 requestId=...`, coloured on a terminal. */
function prettyFormatter(colors: boolean): TextFormatter {
  const options = {
    timestamp: "time" as const,
    value: "bare" as const,
    format: (values: FormattedValues) =>
      `${values.timestamp} ${values.level} ${values.category}: ${values.message}${unshownProperties(values)}`,
  };
  return colors ? getAnsiColorFormatter(options) : getTextFormatter(options);
}

/** The format when LOG_FORMAT is unset: pretty for a person at a terminal, JSON lines for anything else. */
export function defaultLogFormat(): LogFormat {
  return Deno.stdout.isTerminal() ? "pretty" : "json";
}

/** Where and how log lines go: a format on the console, or a sink of the caller's (tests). */
export type LogOutput = { format: LogFormat } | { sink: Sink };

/**
 * Configures logging for the process. On the console, records up to `info`
 * go to stdout and `warning` and above to stderr (LogTape's console sink).
 */
export async function setupLogging(level: LogLevel, output: LogOutput): Promise<void> {
  let sink: Sink;
  if ("sink" in output) {
    sink = output.sink;
  } else {
    // Colours only for a person at a terminal who has not asked for none (https://no-color.org).
    const colors = Deno.stdout.isTerminal() && !Deno.env.get("NO_COLOR");
    sink = getConsoleSink({
      formatter: output.format === "json" ? jsonLinesFormatter : prettyFormatter(colors),
    });
  }
  await configure({
    reset: true,
    contextLocalStorage: new AsyncLocalStorage(),
    sinks: { main: sink },
    loggers: [
      { category: ["inbox"], lowestLevel: level, sinks: ["main"] },
      { category: ["logtape", "meta"], lowestLevel: "warning", sinks: ["main"] },
    ],
  });
}
