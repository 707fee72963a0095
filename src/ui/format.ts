/**
 * How the pages write times and sizes. src/ui/assets/ui.js and live.js write
 * the same forms in the browser (a live row, a ticking countdown), so the
 * two must change together.
 */

/** `2025-01-31 12:34:56 UTC` for an ISO timestamp. */
export function formatTime(iso: string): string {
  return `${iso.slice(0, 10)} ${iso.slice(11, 19)} UTC`;
}

/** `in 59m 12s`, `in 2h 03m`, `in 6d 23h`, or `expired`, for the milliseconds left. */
export function remaining(ms: number): string {
  if (ms <= 0) return "expired";
  const s = Math.floor(ms / 1000);
  const pad = (n: number) => String(n).padStart(2, "0");
  if (s < 3600) return `in ${Math.floor(s / 60)}m ${pad(s % 60)}s`;
  if (s < 86_400) return `in ${Math.floor(s / 3600)}h ${pad(Math.floor(s / 60) % 60)}m`;
  return `in ${Math.floor(s / 86_400)}d ${pad(Math.floor(s / 3600) % 24)}h`;
}

/** `512 B`, `12.3 KB`, `4.0 MB`. */
export function formatSize(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MB`;
}
