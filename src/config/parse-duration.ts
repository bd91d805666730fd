/** Longest delay a Node timer honours; longer ones fire at once (with a warning). */
export const MAX_DURATION_MS = 2_147_483_647;

const UNIT_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };
const PART = /(\d+(?:\.\d+)?)\s*(ms|s|m|h)/gy;

/**
 * Parses a duration into milliseconds: a number (ms), a digit string (ms), or a string of
 * unit parts such as `"500ms"`, `"30s"`, `"2m"`, `"1h"`, `"1m30s"`. Returns `undefined` when
 * the value is not a duration; zero, negative and over-long (> ~24.8 days) values are
 * `undefined` too, since a timer could not honour them.
 *
 * @example
 * parseDuration("2m") // 120000
 */
export function parseDuration(value: unknown): number | undefined {
  let ms: number | undefined;
  if (typeof value === "number") {
    ms = value;
  } else if (typeof value === "string") {
    const text = value.trim().toLowerCase();
    ms = /^\d+(\.\d+)?$/.test(text) ? Number(text) : sumParts(text);
  }
  if (ms === undefined || !Number.isFinite(ms) || ms <= 0 || ms > MAX_DURATION_MS) return undefined;
  return Math.round(ms);
}

function sumParts(text: string): number | undefined {
  if (text === "") return undefined;
  PART.lastIndex = 0;
  let total = 0;
  let consumed = 0;
  for (let match = PART.exec(text); match !== null; match = PART.exec(text)) {
    total += Number(match[1]) * UNIT_MS[match[2]!]!;
    consumed = PART.lastIndex;
    while (text[consumed] === " ") consumed += 1;
    PART.lastIndex = consumed;
  }
  return consumed === text.length ? total : undefined;
}
