import { describeValue, joinPath } from "./config-issues.js";
import type { RecordConfig, ReplayServerConfig } from "./types.js";
import type { RawMap, ValueReader } from "./value-reader.js";

/** The keys of a server about recording and replay. */
export const RECORDING_SERVER_KEYS = ["record", "simulate", "recording", "mode", "speed"];
/** Where `record: true` writes, beside the config file. */
export const DEFAULT_RECORD_DIR = "recordings";

type Resolve = (path: string) => string;

/**
 * `record: DIR | true | { dir, redact, maxBytes, maxFiles }` and `simulate: true` of any server.
 * Relative directories are resolved against the config file's.
 */
export function readRecordOptions(
  reader: ValueReader,
  node: RawMap,
  path: string,
  resolvePath: Resolve,
): { record?: RecordConfig; simulate?: boolean } {
  const out: { record?: RecordConfig; simulate?: boolean } = {};
  const simulate = reader.boolean(node.simulate, joinPath(path, "simulate"));
  if (simulate === true) out.simulate = true;
  const value = node.record;
  const at = joinPath(path, "record");
  if (value === undefined || value === false) return out;
  if (value === true) {
    out.record = { dir: resolvePath(DEFAULT_RECORD_DIR), redact: [] };
    return out;
  }
  if (typeof value === "string") {
    const dir = reader.nonEmpty(value, at);
    if (dir !== undefined) out.record = { dir: resolvePath(dir), redact: [] };
    return out;
  }
  const map = reader.map(value, at);
  if (map === undefined) return out;
  reader.knownKeys(map, at, ["dir", "redact", "maxBytes", "maxFiles"]);
  const dir = reader.nonEmpty(map.dir, joinPath(at, "dir")) ?? DEFAULT_RECORD_DIR;
  const redact = reader.stringList(map.redact, joinPath(at, "redact")) ?? [];
  redact.forEach((key, i) => {
    if (key === "")
      reader.fail(joinPath(joinPath(at, "redact"), i), "an empty key hides nothing; name a field");
  });
  const record: RecordConfig = { dir: resolvePath(dir), redact };
  const maxBytes = reader.count(map.maxBytes, joinPath(at, "maxBytes"), 1024);
  if (maxBytes !== undefined) record.maxBytes = maxBytes;
  const maxFiles = reader.count(map.maxFiles, joinPath(at, "maxFiles"), 0);
  if (maxFiles !== undefined) record.maxFiles = maxFiles;
  out.record = record;
  return out;
}

/** `transport: replay` with `recording: FILE`, `mode` and `speed`. */
export function readReplay(
  reader: ValueReader,
  node: RawMap,
  path: string,
  resolvePath: Resolve,
): Pick<ReplayServerConfig, "transport" | "recording" | "mode" | "speed"> | undefined {
  const file = reader.nonEmpty(node.recording, joinPath(path, "recording"));
  if (node.recording === undefined)
    reader.fail(path, 'transport "replay" needs "recording": a file written by `mcplex serve --record DIR`');
  const mode =
    reader.choice(node.mode, joinPath(path, "mode"), ["sequential", "match"] as const) ?? "sequential";
  const speed = readSpeed(reader, node.speed, joinPath(path, "speed"));
  if (file === undefined) return undefined;
  return { transport: "replay", recording: [resolvePath(file)], mode, speed };
}

/** Keys that only mean something with `transport: replay`. */
export function misplacedReplayKeys(reader: ValueReader, node: RawMap, path: string): void {
  for (const key of ["recording", "mode", "speed"])
    if (node[key] !== undefined)
      reader.fail(joinPath(path, key), 'applies to "transport: replay" servers only');
}

function readSpeed(reader: ValueReader, value: unknown, path: string): number {
  if (value === undefined) return 1;
  const n = typeof value === "string" && value.trim() !== "" ? Number(value) : value;
  if (typeof n === "number" && Number.isFinite(n) && n >= 0) return n;
  reader.fail(
    path,
    `must be a number of 0 or more (1: recorded pace, 0: at once), not ${describeValue(value)}`,
  );
  return 1;
}
