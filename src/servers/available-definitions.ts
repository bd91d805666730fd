import type { Tool } from "@modelcontextprotocol/client";
import { compileToolFilter } from "../catalog/tool-filter.js";
import { plainName } from "../catalog/tool-naming.js";
import type { ProfileConfig, ServerConfig } from "../config/types.js";
import { McplexError } from "../errors.js";
import type { ToolListStore } from "../recording/tool-list-store.js";
import { definitionHash, recordToolList } from "./tool-lists.js";

/** What is shown of a tool of an `available:` server: enough to show and describe it while its server is stopped. */
export type CachedTool = Pick<Tool, "name" | "description" | "inputSchema"> & { title?: string };

/** One `available:` server as {@link Hub.availableTools} shows it. */
export interface AvailableServer {
  /** The server's name under `available:`. */
  server: string;
  /** Whether it runs now (started by `connectServer`). */
  connected: boolean;
  /**
   * Its tools, by the server's own names: the live list while connected, else the list recorded
   * the last time it ran (empty when it never ran, or its definition changed since).
   */
  tools: CachedTool[];
  /** When the shown list was recorded (epoch ms); absent while connected or never recorded. */
  recordedAt?: number;
}

/** What `AvailableServers` gives {@link AvailableDefinitions}. */
export interface AvailableDefinitionsHost {
  /** The live tools of a connected available server; `undefined` when it is not connected. */
  liveTools(name: string): readonly Tool[] | undefined;
  /** The profile config by name (throws for an unknown one). */
  profile(name: string): ProfileConfig;
}

/**
 * The definitions of the `available:` servers (approved by the user, started only on request)
 * with their last-seen tool lists: decides who may start which, and shows each one's tools;
 * `AvailableServers` does the starting and stopping.
 */
export class AvailableDefinitions {
  #configs: Map<string, ServerConfig>;
  readonly #lists: ToolListStore;
  readonly #host: AvailableDefinitionsHost;

  constructor(configs: readonly ServerConfig[], lists: ToolListStore, host: AvailableDefinitionsHost) {
    this.#configs = new Map(configs.map((c) => [c.name, c]));
    this.#lists = lists;
    this.#host = host;
  }

  /** The names, in config order. */
  names(): string[] {
    return [...this.#configs.keys()];
  }

  /** Replaces the definitions (a reloaded config); connected servers are the hub's business. */
  set(configs: readonly ServerConfig[]): void {
    this.#configs = new Map(configs.map((c) => [c.name, c]));
  }

  /**
   * The definition to start for `name`, as a server that starts at once. Refuses a name that is
   * not under `available:`, or one `profile` could not see, with the names it may use.
   */
  async require(name: string, profile?: string): Promise<ServerConfig> {
    const config = this.#configs.get(name);
    const allowed = await this.#reachable(profile);
    if (config === undefined || !allowed.includes(name)) {
      const scope = profile === undefined ? "" : ` to profile "${profile}"`;
      throw new McplexError(
        "INVALID_ARGUMENT",
        `server "${name}" is not available${scope}; available: ${allowed.length === 0 ? "none" : allowed.join(", ")}`,
        {
          server: name,
          hint:
            config === undefined
              ? 'only servers listed under "available:" in the config can be connected'
              : `add "${name}" to profiles.${profile}.servers to let this profile connect it`,
        },
      );
    }
    return { ...config, enabled: true, lazy: false };
  }

  /** The names `profile` may connect (all of them without a profile). */
  async reachable(profile?: string): Promise<string[]> {
    return this.#reachable(profile);
  }

  /** Records a connected server's tools, for showing them once it is stopped. */
  async record(name: string, tools: readonly Tool[]): Promise<void> {
    const config = this.#configs.get(name);
    if (config === undefined || tools.length === 0) return;
    await recordToolList(this.#lists, config, tools);
  }

  /** Every available server `profile` may see, with its live or recorded tools. */
  async list(profile?: string): Promise<AvailableServer[]> {
    const names = await this.#reachable(profile);
    return Promise.all(names.map((name) => this.#describe(this.#configs.get(name)!)));
  }

  async #describe(config: ServerConfig): Promise<AvailableServer> {
    const live = this.#host.liveTools(config.name);
    if (live !== undefined) {
      return {
        server: config.name,
        connected: true,
        tools: live.map(cachedTool),
      };
    }
    const cached = await this.#recorded(config);
    return cached === undefined
      ? { server: config.name, connected: false, tools: [] }
      : { server: config.name, connected: false, tools: cached.tools, recordedAt: cached.recordedAt };
  }

  /**
   * A profile reaches an available server as it reaches any server: named in its `servers`; or,
   * without `servers`, one of the server's tools (live or recorded) passes its `tools.allow`;
   * with neither, always.
   */
  async #reachable(profileName?: string): Promise<string[]> {
    const all = this.names();
    if (profileName === undefined) return all;
    const profile = this.#host.profile(profileName);
    if (profile.servers !== undefined) return all.filter((name) => profile.servers!.includes(name));
    if (profile.tools.allow === undefined) return all;
    const passes = compileToolFilter(profile.tools);
    const reached: string[] = [];
    for (const name of all) {
      const config = this.#configs.get(name)!;
      const tools = this.#host.liveTools(name) ?? (await this.#recorded(config))?.tools ?? [];
      const prefix = config.prefix ?? config.name;
      if (tools.some((t) => passes(plainName(prefix, t.name)))) reached.push(name);
    }
    return reached;
  }

  /** The list recorded when `config` last ran, unless its definition changed since. */
  async #recorded(config: ServerConfig): Promise<{ tools: CachedTool[]; recordedAt: number } | undefined> {
    const list = await this.#lists.get(config.name);
    if (list === undefined || list.definition !== definitionHash(config)) return undefined;
    return { tools: (list.tools as unknown as Tool[]).map(cachedTool), recordedAt: Date.parse(list.savedAt) };
  }
}

function cachedTool(tool: Tool): CachedTool {
  const cached: CachedTool = { name: tool.name, inputSchema: tool.inputSchema };
  if (tool.title !== undefined) cached.title = tool.title;
  if (tool.description !== undefined) cached.description = tool.description;
  return cached;
}
