import type { Tool } from "@modelcontextprotocol/client";
import type { CatalogTool, ServerSnapshot } from "../../catalog/types.js";
import { COMPOSITE_SERVER } from "../../config/read-composites.js";
import type { CompositeToolConfig } from "../../config/types.js";

export { COMPOSITE_SERVER };

/**
 * What the catalog sees of `composites:`: one server, `composite`, whose tools are listed under
 * their own names (prefix `""`), always ready. `undefined` when there are none.
 */
export function compositeSnapshot(
  composites: Record<string, CompositeToolConfig> | undefined,
): ServerSnapshot | undefined {
  if (composites === undefined || Object.keys(composites).length === 0) return undefined;
  const tools = Object.entries(composites).map(([name, c]): Tool => {
    const tool: Tool = {
      name,
      description: c.description,
      inputSchema: c.inputSchema as Tool["inputSchema"],
    };
    if (c.title !== undefined) tool.title = c.title;
    if (c.outputSchema !== undefined) tool.outputSchema = c.outputSchema as Tool["outputSchema"];
    if (c.annotations !== undefined) tool.annotations = c.annotations as Tool["annotations"];
    return tool;
  });
  return { server: COMPOSITE_SERVER, prefix: "", state: "ready", tools, listedAt: Date.now() };
}

/** Whether a catalog entry is a composite tool. */
export function isComposite(tool: CatalogTool | undefined): boolean {
  return tool?.server === COMPOSITE_SERVER;
}

/**
 * The config's `composites:` at work in a hub: their definitions by name, and their entries in
 * the catalog (as server `composite`), replaced on a reload.
 */
export class Composites {
  #defined: Record<string, CompositeToolConfig> = {};
  readonly #catalog: { setServer(snapshot: ServerSnapshot): void; removeServer(server: string): boolean };

  constructor(
    catalog: { setServer(snapshot: ServerSnapshot): void; removeServer(server: string): boolean },
    composites: Record<string, CompositeToolConfig> | undefined,
  ) {
    this.#catalog = catalog;
    this.set(composites);
  }

  /** Takes a (reloaded) config's composites; `true` when they changed. */
  set(composites: Record<string, CompositeToolConfig> | undefined): boolean {
    const next = composites ?? {};
    if (JSON.stringify(next) === JSON.stringify(this.#defined)) return false;
    this.#defined = next;
    const snapshot = compositeSnapshot(next);
    if (snapshot === undefined) this.#catalog.removeServer(COMPOSITE_SERVER);
    else this.#catalog.setServer(snapshot);
    return true;
  }

  /** The composite of this name (its name as defined, not as a profile shows it). */
  get(name: string): CompositeToolConfig | undefined {
    return Object.hasOwn(this.#defined, name) ? this.#defined[name] : undefined;
  }
}
