import type { Tool } from "@modelcontextprotocol/client";
import type { ProfileConfig, ServerConfig } from "../config/types.js";
import { McplexError } from "../errors.js";
import type { ToolListStore } from "../recording/tool-list-store.js";
import type { AvailableServer } from "./available-definitions.js";
import { AvailableDefinitions } from "./available-definitions.js";

export type { AvailableServer, CachedTool } from "./available-definitions.js";

/** What {@link AvailableServers} needs of the hub that runs the servers. */
export interface AvailableHost {
  /** Whether a server of that name runs already (from `servers:` or connected). */
  has(name: string): boolean;
  /** Adds the server to the hub and the catalog; resolves when it has started (rejects if not). */
  start(config: ServerConfig): Promise<void>;
  /** Removes a server the hub runs. */
  remove(name: string): Promise<void>;
  /** The live tools of a running server. */
  tools(name: string): readonly Tool[] | undefined;
  /** The profile config by name (throws for an unknown one). */
  profile(name: string): ProfileConfig;
}

/**
 * The servers of the config's `available:` map, started and stopped on request
 * (`connect_server` / `disconnect_server`): who may start which, the connections running now,
 * and the tool list each had when it last ran (kept on disk, for a search of tools of servers
 * not running).
 */
export class AvailableServers {
  readonly #host: AvailableHost;
  readonly #definitions: AvailableDefinitions;
  /** Servers connected on request, by name: their start, shared by concurrent connects. */
  readonly #connected = new Map<string, Promise<void>>();

  constructor(configs: readonly ServerConfig[], lists: ToolListStore, host: AvailableHost) {
    this.#host = host;
    this.#definitions = new AvailableDefinitions(configs, lists, {
      liveTools: (name) => (this.#connected.has(name) ? host.tools(name) : undefined),
      profile: (name) => host.profile(name),
    });
  }

  /** The names `profile` may connect (all of them without a profile). */
  reachable(profile?: string): Promise<string[]> {
    return this.#definitions.reachable(profile);
  }

  /** The servers `profile` may connect, with their live or recorded tools. */
  list(profile?: string): Promise<AvailableServer[]> {
    return this.#definitions.list(profile);
  }

  /** Starts one (connecting a connected one does nothing); a failed start leaves nothing behind. */
  async connect(name: string, profile?: string): Promise<void> {
    const config = await this.#definitions.require(name, profile);
    let starting = this.#connected.get(name);
    if (starting === undefined) {
      if (this.#host.has(name))
        throw new McplexError("INVALID_ARGUMENT", `server "${name}" already runs from "servers:"`, {
          server: name,
        });
      starting = this.#start(config);
      this.#connected.set(name, starting);
    }
    await starting;
  }

  async #start(config: ServerConfig): Promise<void> {
    try {
      await this.#host.start(config);
    } catch (error) {
      this.#connected.delete(config.name);
      if (this.#host.has(config.name)) await this.#host.remove(config.name).catch(() => {});
      throw error;
    }
    await this.#definitions.record(config.name, this.#host.tools(config.name) ?? []);
  }

  /** Stops one started by {@link connect}, recording its tools; `false` when it was not connected. */
  async disconnect(name: string, profile?: string): Promise<boolean> {
    await this.#definitions.require(name, profile);
    const starting = this.#connected.get(name);
    if (starting === undefined) return false;
    await starting.catch(() => {});
    if (!this.#connected.delete(name)) return false;
    const tools = this.#host.tools(name);
    if (tools !== undefined) await this.#definitions.record(name, tools);
    await this.#host.remove(name);
    return true;
  }

  /** Replaces the definitions (a reloaded config); connected ones no longer listed are stopped. */
  async set(configs: readonly ServerConfig[]): Promise<void> {
    this.#definitions.set(configs);
    const kept = new Set(configs.map((c) => c.name));
    for (const name of [...this.#connected.keys()]) {
      if (kept.has(name)) continue;
      this.#connected.delete(name);
      if (this.#host.has(name)) await this.#host.remove(name);
    }
  }

  /** Forgets a server the hub removed some other way (a reload, `removeServer`). */
  forget(name: string): void {
    this.#connected.delete(name);
  }
}
