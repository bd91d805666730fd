import { describeValue, joinPath } from "./config-issues.js";
import type { QuotaConfig } from "./types.js";
import type { ValueReader } from "./value-reader.js";

const QUOTA_KEYS = ["name", "servers", "tools", "profiles", "per", "calls", "window", "concurrent"];
const PER: readonly QuotaConfig["per"][] = ["caller", "all"];
/** The shortest window: below a second, clocks of replicas and Redis disagree more than it lasts. */
const MIN_WINDOW_MS = 1000;

/**
 * `quotas:`: a list of `{ name, servers?, tools?, profiles?, per?, calls?, window?, concurrent? }`,
 * each with `calls` and `window`, or `concurrent`, or both.
 */
export function readQuotas(reader: ValueReader, value: unknown): QuotaConfig[] | undefined {
  if (value === undefined || value === null) return undefined;
  if (!Array.isArray(value)) {
    reader.fail(
      "quotas",
      `must be a list such as [{ name: searches, tools: ["github__search_*"], calls: 100, window: 1h }], not ${describeValue(value)}`,
    );
    return undefined;
  }
  const out: QuotaConfig[] = [];
  const names = new Set<string>();
  value.forEach((item, i) => {
    const path = joinPath("quotas", i);
    const quota = readQuota(reader, item, path);
    if (quota === undefined) return;
    if (names.has(quota.name)) {
      reader.fail(joinPath(path, "name"), `"${quota.name}" names another quota too; names are unique`);
      return;
    }
    names.add(quota.name);
    out.push(quota);
  });
  return out;
}

function readQuota(reader: ValueReader, item: unknown, path: string): QuotaConfig | undefined {
  const node = reader.map(item, path);
  if (node === undefined) return undefined;
  reader.knownKeys(node, path, QUOTA_KEYS);
  const name = reader.nonEmpty(node.name, joinPath(path, "name"));
  if (node.name === undefined)
    reader.fail(joinPath(path, "name"), "is required: refusals, metrics and the audit trail name the quota");
  const quota: QuotaConfig = { name: name ?? "", per: "caller" };
  for (const key of ["servers", "tools", "profiles"] as const) {
    const list = reader.stringList(node[key], joinPath(path, key));
    if (list !== undefined) quota[key] = list;
  }
  const per = reader.choice(node.per, joinPath(path, "per"), PER);
  if (per !== undefined) quota.per = per;
  const calls = reader.count(node.calls, joinPath(path, "calls"));
  const window = reader.duration(node.window, joinPath(path, "window"));
  const concurrent = reader.count(node.concurrent, joinPath(path, "concurrent"));
  if (calls !== undefined) quota.calls = calls;
  if (window !== undefined) {
    if (window < MIN_WINDOW_MS) reader.fail(joinPath(path, "window"), "must be at least 1s");
    else quota.window = window;
  }
  if (concurrent !== undefined) quota.concurrent = concurrent;
  if ((node.calls === undefined) !== (node.window === undefined))
    reader.fail(
      path,
      node.calls === undefined
        ? 'has a "window" but no "calls": say how many calls it allows, e.g. calls: 100'
        : 'has "calls" but no "window": say what they are counted over, e.g. window: 1h',
    );
  if (node.calls === undefined && node.concurrent === undefined)
    reader.fail(path, 'limits nothing: give "calls" and "window", or "concurrent", or both');
  return name === undefined ? undefined : quota;
}
