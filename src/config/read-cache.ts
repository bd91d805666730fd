import { joinPath } from "./config-issues.js";
import type { CacheConfig, ToolCacheConfig } from "./types.js";
import type { ValueReader } from "./value-reader.js";

const CACHE_KEYS = ["ttl", "tools"];
const TOOL_CACHE_KEYS = ["ttl", "readOnly"];

/**
 * Reads `servers.NAME.cache`: `{ ttl: 60s, tools: { search_*: { ttl: 5m }, get_me: false,
 * list_things: { readOnly: true } } }`. Tool keys are globs over the server's own tool names.
 */
export function readCache(reader: ValueReader, value: unknown, path: string): { cache?: CacheConfig } {
  const node = reader.map(value, path);
  if (node === undefined) return {};
  reader.knownKeys(node, path, CACHE_KEYS);
  const ttl = reader.duration(node.ttl, joinPath(path, "ttl"));
  if (node.ttl === undefined) reader.fail(path, 'needs "ttl": how long a result is reused, e.g. 60s');
  // The tool rules are read even without a ttl, so that every problem is named at once.
  const cache: CacheConfig = { ttl: ttl ?? 0 };
  const tools = node.tools === undefined ? undefined : reader.map(node.tools, joinPath(path, "tools"));
  if (tools !== undefined) {
    cache.tools = {};
    for (const [glob, entry] of Object.entries(tools)) {
      const toolPath = joinPath(joinPath(path, "tools"), glob);
      if (entry === false) {
        cache.tools[glob] = false;
        continue;
      }
      const toolNode = reader.map(entry, toolPath);
      if (toolNode === undefined) continue;
      reader.knownKeys(toolNode, toolPath, TOOL_CACHE_KEYS);
      const tool: ToolCacheConfig = {};
      const toolTtl = reader.duration(toolNode.ttl, joinPath(toolPath, "ttl"));
      if (toolTtl !== undefined) tool.ttl = toolTtl;
      const readOnly = reader.boolean(toolNode.readOnly, joinPath(toolPath, "readOnly"));
      if (readOnly !== undefined) tool.readOnly = readOnly;
      cache.tools[glob] = tool;
    }
  }
  return ttl === undefined ? {} : { cache };
}
