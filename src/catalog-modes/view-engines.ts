import type { ToolIndex } from "../catalog/tool-index.js";
import type { CatalogTool } from "../catalog/types.js";
import type { CodeLimits } from "../code-mode/limits.js";
import type { CodeRunner, ToolSearch, ViewEngines } from "./catalog-view.js";

/**
 * The engines of the views `serve` and `chat` build: the catalog's full-text tool index for
 * `search_tools`, and the code-mode sandbox for `run_code` and its declarations. Each is loaded
 * on first use, so a gateway in `all` mode never loads them (see bench/startup-bench.ts).
 * `codeLimits` bound every `run_code` run (`serve.code` in the config).
 */
export function viewEngines(options: { codeLimits?: Partial<CodeLimits> } = {}): ViewEngines {
  let runner: Promise<CodeRunner> | undefined;
  return {
    search: indexedSearch(),
    runCode: async (request) => {
      runner ??= import("./run-code-tool.js").then((m) => m.runCodeTool(options.codeLimits));
      return (await runner)(request);
    },
    declarations: async (tools) => (await import("./run-code-tool.js")).declarationsOf(tools),
  };
}

/**
 * `search_tools` over a {@link ToolIndex} of the caller's tools. The catalog hands out the same
 * list object until it changes, so an index is built once per list (per profile) and dropped
 * with it.
 */
export function indexedSearch(): ToolSearch {
  const indexes = new WeakMap<readonly CatalogTool[], ToolIndex>();
  let load: Promise<typeof import("../catalog/tool-index.js")> | undefined;
  return async (tools, query, options) => {
    load ??= import("../catalog/tool-index.js");
    const { ToolIndex } = await load;
    let index = indexes.get(tools);
    if (index === undefined) {
      index = new ToolIndex(tools);
      indexes.set(tools, index);
    }
    return index
      .search(query, options)
      .map(({ name, server, description }) => ({ name, server, description }));
  };
}
