/** A clock that only moves when told to, so tests decide what time it is. */
import type { Clock } from "../../src/shared/clock.ts";

/** Where test clocks start unless a test says otherwise: 2026-01-01T00:00:00Z. */
export const T0 = Date.parse("2026-01-01T00:00:00Z");

export class ManualClock implements Clock {
  #ms: number;
  constructor(start: Date | number = Date.now()) {
    this.#ms = typeof start === "number" ? start : start.getTime();
  }
  now(): Date {
    return new Date(this.#ms);
  }
  /** Moves the clock forward by `ms` milliseconds. */
  advance(ms: number): void {
    this.#ms += ms;
  }
}
