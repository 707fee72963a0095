/** Captures every log record of the test process, so tests can scan logs for secrets. */
import type { LogRecord } from "@logtape/logtape";
import { setupLogging } from "../../src/shared/log.ts";

/** Every record logged since `captureLogs()` ran. */
export const capturedLogs: LogRecord[] = [];

let started = false;

/** Routes all logging into `capturedLogs` (idempotent). */
export async function captureLogs(): Promise<void> {
  if (started) return;
  started = true;
  await setupLogging("debug", {
    sink: (record) => {
      capturedLogs.push(record);
    },
  });
}

/** All captured records as one text: messages and properties. */
export function capturedLogText(): string {
  return capturedLogs.map((r) => JSON.stringify({ m: r.message, p: r.properties })).join("\n");
}
