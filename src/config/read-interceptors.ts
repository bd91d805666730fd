import { isAbsolute, resolve } from "node:path";
import { describeValue, joinPath } from "./config-issues.js";
import type { ReadContext } from "./read-server.js";
import type { InterceptorModuleConfig } from "./types.js";

const ENTRY_KEYS = ["module", "at"];

/**
 * `interceptors:`: a list of module paths (relative to the config file), or of
 * `{ module, at: call | upstream }`. The modules are loaded when a command starts, not here.
 */
export function readInterceptorModules(ctx: ReadContext, value: unknown): InterceptorModuleConfig[] {
  const { reader } = ctx;
  if (!Array.isArray(value)) {
    reader.fail(
      "interceptors",
      `must be a list of module paths (e.g. [./audit.mjs]), not ${describeValue(value)}`,
    );
    return [];
  }
  const modules: InterceptorModuleConfig[] = [];
  value.forEach((item, i) => {
    const path = joinPath("interceptors", i);
    const node = typeof item === "string" ? { module: item } : reader.map(item, path);
    if (node === undefined) return;
    reader.knownKeys(node, path, ENTRY_KEYS);
    const module = reader.nonEmpty(node.module, typeof item === "string" ? path : joinPath(path, "module"));
    const at = node.at ?? "call";
    if (at !== "call" && at !== "upstream") {
      reader.fail(joinPath(path, "at"), `must be call or upstream, not ${describeValue(at)}`);
      return;
    }
    if (module === undefined) return;
    modules.push({ module: isAbsolute(module) ? module : resolve(ctx.baseDir, module), at });
  });
  return modules;
}
