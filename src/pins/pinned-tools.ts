import type { Tool } from "@modelcontextprotocol/client";
import type { ServerSnapshot } from "../catalog/types.js";
import type { ServerConfig } from "../config/types.js";
import type { ToolChange, ToolPins } from "./tool-pins.js";

/**
 * The hub's side of pinning: each pinned server's snapshot filtered through its {@link ToolPins}
 * before the catalog sees it, and the changes that wait for approval, remembered per server so
 * that they are announced once each time they differ (`announce`, a `pin-changes` event).
 */
export class PinnedTools {
  readonly #pins: ToolPins | undefined;
  readonly #announce: (server: string, changes: ToolChange[]) => void;
  /** The unapproved changes of each pinned server, as last reported, and a key to compare them. */
  readonly #changes = new Map<string, { key: string; changes: ToolChange[] }>();

  constructor(pins: ToolPins | undefined, announce: (server: string, changes: ToolChange[]) => void) {
    this.#pins = pins;
    this.#announce = announce;
  }

  /** The pins, when the hub has any (`HubOptions.pins`). */
  get pins(): ToolPins | undefined {
    return this.#pins;
  }

  /**
   * `snapshot` with the tools its server's policy holds left out (the snapshot is changed in
   * place and returned). `listedAt` 0: nothing listed yet, which is not a list to pin.
   */
  filter(config: ServerConfig, snapshot: ServerSnapshot, listedAt: number): ServerSnapshot {
    const name = config.name;
    const policy = config.pin;
    if (this.#pins === undefined || policy === undefined || policy === "off") {
      // Pinning turned off by a reload: what it reported is no longer in force.
      if (this.#changes.delete(name)) this.#later(name, []);
      return snapshot;
    }
    if (listedAt === 0) return snapshot;
    const { tools, changes } = this.#pins.check(name, policy, snapshot.tools ?? []);
    snapshot.tools = tools;
    const key = changes.map((c) => `${c.kind}\0${c.tool}\0${c.current ?? ""}\0${c.held}`).join("\n");
    if ((this.#changes.get(name)?.key ?? "") !== key) {
      this.#changes.set(name, { key, changes });
      this.#later(name, changes);
    }
    return snapshot;
  }

  /**
   * `tools` (a server's, as listed) less those its policy holds: what may be shown or recorded of
   * it anywhere (a held description must not reach a model through another door).
   */
  approved(config: ServerConfig, tools: readonly Tool[]): readonly Tool[] {
    const held = this.changes(config.name).filter((c) => c.held);
    if (held.length === 0) return tools;
    if (config.pin === "hold-server") return [];
    const names = new Set(held.map((c) => c.tool));
    return tools.filter((t) => !names.has(t.name));
  }

  /** The changes waiting for approval: one server's, or every server's. */
  changes(server?: string): ToolChange[] {
    if (server !== undefined) return this.#changes.get(server)?.changes ?? [];
    return [...this.#changes.values()].flatMap((p) => p.changes);
  }

  /** Forgets a server removed from the hub. */
  forget(server: string): void {
    this.#changes.delete(server);
  }

  // Announced after the catalog has the snapshot being made: listeners read a settled hub.
  #later(server: string, changes: ToolChange[]): void {
    queueMicrotask(() => this.#announce(server, changes));
  }
}
