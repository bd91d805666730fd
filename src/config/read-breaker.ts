import { describeValue, joinPath } from "./config-issues.js";
import type { BackoffConfig, BreakerConfig } from "./types.js";
import type { ValueReader } from "./value-reader.js";

const BREAKER_KEYS = ["failures", "openFor"];
const BACKOFF_KEYS = ["initial", "max", "healthyAfter"];

/** Reads `servers.NAME.breaker`: `{ failures: 8, openFor: 5m }`. */
export function readBreaker(reader: ValueReader, value: unknown, path: string): { breaker?: BreakerConfig } {
  const node = reader.map(value, path);
  if (node === undefined) return {};
  reader.knownKeys(node, path, BREAKER_KEYS);
  const breaker: BreakerConfig = {};
  const failures = readCount(reader, node.failures, joinPath(path, "failures"));
  if (failures !== undefined) breaker.failures = failures;
  const openFor = reader.duration(node.openFor, joinPath(path, "openFor"));
  if (openFor !== undefined) breaker.openFor = openFor;
  return { breaker };
}

/** Reads `servers.NAME.backoff`: `{ initial: 1s, max: 30s, healthyAfter: 60s }`. */
export function readBackoff(reader: ValueReader, value: unknown, path: string): { backoff?: BackoffConfig } {
  const node = reader.map(value, path);
  if (node === undefined) return {};
  reader.knownKeys(node, path, BACKOFF_KEYS);
  const backoff: BackoffConfig = {};
  for (const key of BACKOFF_KEYS as Array<keyof BackoffConfig>) {
    const ms = reader.duration(node[key], joinPath(path, key));
    if (ms !== undefined) backoff[key] = ms;
  }
  if (backoff.initial !== undefined && backoff.max !== undefined && backoff.initial > backoff.max)
    reader.fail(joinPath(path, "initial"), `is more than "max"; make "initial" at most ${backoff.max} ms`);
  return { backoff };
}

function readCount(reader: ValueReader, value: unknown, path: string): number | undefined {
  if (value === undefined) return undefined;
  const text = typeof value === "string" ? reader.string(value, path) : value;
  const count = typeof text === "string" && /^\d+$/.test(text) ? Number(text) : text;
  if (typeof count === "number" && Number.isInteger(count) && count >= 1 && count <= 1000) return count;
  return reader.fail(path, `must be a whole number from 1 to 1000, not ${describeValue(text)}`);
}
