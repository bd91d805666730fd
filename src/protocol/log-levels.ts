/** Logging levels in increasing severity (RFC 5424 order as MCP uses it). */
export const LOG_LEVELS = ["debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"];

/** Whether a message at `level` passes a threshold of `min`. */
export function logPasses(level: unknown, min: string | undefined): boolean {
  if (min === undefined) return false;
  const at = LOG_LEVELS.indexOf(String(level));
  return at === -1 || at >= LOG_LEVELS.indexOf(min);
}
