import { editDistance } from "../config/config-issues.js";

/**
 * Up to `limit` of `names` nearest to `name` (a typo of it), nearest first: within an edit
 * distance of a third of its length, at least 2, so that short names do not match everything.
 *
 * @example nearestNames("api__lokup", ["api__lookup", "fs__read"]) // ["api__lookup"]
 */
export function nearestNames(name: string, names: readonly string[], limit = 3): string[] {
  const most = Math.max(2, Math.floor(name.length / 3));
  return names
    .map((candidate) => ({ candidate, d: editDistance(name.toLowerCase(), candidate.toLowerCase()) }))
    .filter(({ d }) => d <= most)
    .sort((a, b) => a.d - b.d || (a.candidate < b.candidate ? -1 : 1))
    .slice(0, limit)
    .map(({ candidate }) => candidate);
}
