/**
 * bench:compare's quick mode: each target started once, its tools listed and the echo tool
 * called a handful of times, one and eight at a time. It checks that every target answers,
 * nothing about its speed; the suite runs it (test/bench/compare-quick.test.ts), the optional
 * layers' targets included.
 */
import { hasEcho } from "./cold-start.js";
import { withLayerTargets } from "./layers.js";
import { echoCall } from "./raw-clients.js";
import { start, type TargetSpec } from "./targets.js";

export interface QuickResult {
  front: string;
  id: string;
  label: string;
  /** Undefined when the target answered everything; else what went wrong. */
  error?: string;
}

async function check(spec: TargetSpec): Promise<void> {
  const r = await start(spec);
  try {
    const list = await r.connection.request("tools/list", {});
    if (!hasEcho(list)) throw new Error(`no echo tool in ${JSON.stringify(list).slice(0, 200)}`);
    await echoCall(r.connection, "quick check");
    await Promise.all(Array.from({ length: 8 }, (_, i) => echoCall(r.connection, `call ${i}`)));
  } finally {
    await r.stop();
  }
}

/** Checks every target in turn; a failure is reported, not thrown. */
export async function quickCheck(specs: readonly TargetSpec[]): Promise<QuickResult[]> {
  const results: QuickResult[] = [];
  for (const spec of specs) {
    const result: QuickResult = { front: spec.front, id: spec.id, label: spec.label };
    try {
      await check(spec);
    } catch (error) {
      result.error = String(error);
    }
    results.push(result);
  }
  return results;
}

/** Every target of `specs`, then each optional layer's mcplex target (layers.ts) with its support. */
export async function quickCheckAll(specs: readonly TargetSpec[], scratch: string): Promise<QuickResult[]> {
  const results = await quickCheck(specs);
  const layered = await withLayerTargets(specs, scratch, (all) =>
    quickCheck(all.filter((s) => s.id !== "mcplex")),
  );
  return [...results, ...layered];
}
