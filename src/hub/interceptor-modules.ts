import { pathToFileURL } from "node:url";
import { joinPath } from "../config/config-issues.js";
import type { InterceptorModuleConfig } from "../config/types.js";
import { ConfigError } from "../errors.js";
import type { Interceptor } from "./call-pipeline.js";

/** The interceptors of a config's `interceptors:`, by where they go (`HubOptions`). */
export interface LoadedInterceptors {
  interceptors: Interceptor[];
  upstreamInterceptors: Interceptor[];
}

/**
 * Imports the modules of `interceptors:`, in order. Each default-exports an interceptor, which
 * gets parsed results unless it declares `needs = "raw"` (see `ResultNeeds`); a module that
 * cannot be imported, or exports something else, is a `ConfigError` naming its entry and what
 * to export.
 */
export async function loadInterceptorModules(
  modules: readonly InterceptorModuleConfig[] = [],
): Promise<LoadedInterceptors> {
  const loaded: LoadedInterceptors = { interceptors: [], upstreamInterceptors: [] };
  for (const [i, entry] of modules.entries()) {
    const path = joinPath("interceptors", i);
    let exported: unknown;
    try {
      exported = ((await import(pathToFileURL(entry.module).href)) as { default?: unknown }).default;
    } catch (error) {
      throw new ConfigError(
        `interceptor module ${entry.module} could not be loaded: ${(error as Error).message}`,
        { path, hint: "check the path (relative to the config file) and that the module runs under Node" },
        { cause: error },
      );
    }
    if (typeof exported !== "function" || exported.length !== 1) {
      throw new ConfigError(`interceptor module ${entry.module} has no interceptor as its default export`, {
        path,
        hint: "export default (next) => async (request) => next(request);",
      });
    }
    const list = entry.at === "upstream" ? loaded.upstreamInterceptors : loaded.interceptors;
    list.push(exported as Interceptor);
  }
  return loaded;
}
