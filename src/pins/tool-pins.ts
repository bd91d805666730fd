import type { Tool } from "@modelcontextprotocol/client";
import type { PinPolicy } from "../config/types.js";
import { McplexError } from "../errors.js";
import { type LockedTool, type PinLock, readPinLock, updatePinLock } from "./pin-lock-file.js";
import { diffTool, type FieldChange } from "./tool-diff.js";
import { canonicalJson, FORMAT_1_FIELDS, opensApp, pinnedTool, toolFingerprint } from "./tool-fingerprint.js";

/**
 * A tool whose listing differs from what was approved: `changed` (a pinned field differs),
 * `added` (a name not approved: a new tool, or the new name of a renamed one) or `removed` (an
 * approved name no longer listed). A rename is a removal plus an addition.
 */
export interface ToolChange {
  server: string;
  /** The tool's original name (as its server lists it). */
  tool: string;
  kind: "changed" | "added" | "removed";
  /** Whether it is kept out of the catalog (by the server's policy) until trusted. */
  held: boolean;
  /** The fingerprint approved; absent for an added tool. */
  pinned?: string;
  /** The fingerprint listed now; absent for a removed tool. */
  current?: string;
  /** The pinned fields that differ, each with its text before and after and a line diff. */
  fields: FieldChange[];
}

/** What {@link ToolPins.check} lets into the catalog, and what it holds or reports. */
export interface PinCheck {
  tools: Tool[];
  changes: ToolChange[];
}

/**
 * The approved fingerprints of every pinned server's tools, backed by a lock file (see
 * `pin-lock-file.ts`). The first list of a server not in the lock is approved as it is and
 * written there; a later list is compared with it, and what differs waits for {@link trust}.
 *
 * @example
 * const pins = await ToolPins.open(lockFilePath(config.source));
 * const { tools, changes } = pins.check("github", "hold-tools", listedTools);
 */
export class ToolPins {
  readonly path: string;
  #lock: PinLock;
  /** What each server listed last, by original name: what {@link trust} approves. */
  readonly #listed = new Map<string, Map<string, ListedTool>>();
  /** Writes in flight, in order; {@link flush} waits for them. */
  #writes: Promise<unknown> = Promise.resolve();
  #writeError: unknown;

  private constructor(path: string, lock: PinLock) {
    this.path = path;
    this.#lock = lock;
  }

  /** The pins of the lock file at `path` (empty when there is none yet). */
  static async open(path: string): Promise<ToolPins> {
    return new ToolPins(path, await readPinLock(path));
  }

  /**
   * Re-reads the lock file (another process trusted a change); `true` when it differs from what
   * these pins hold, and the caller should check its servers again.
   */
  async reload(): Promise<boolean> {
    await this.#writes;
    const lock = await readPinLock(this.path);
    if (canonicalJson(lock) === canonicalJson(this.#lock)) return false;
    this.#lock = lock;
    return true;
  }

  /** Whether `server` has tools pinned. */
  has(server: string): boolean {
    return own(this.#lock.servers, server) !== undefined;
  }

  /**
   * Compares `listed` (all of `server`'s tools, as it lists them now) with what was approved and
   * returns what may enter the catalog under `policy`, and every difference. A server seen for
   * the first time has its tools pinned as they are (written to the lock file behind).
   */
  check(server: string, policy: Exclude<PinPolicy, "off">, listed: readonly Tool[]): PinCheck {
    const now = new Map<string, ListedTool>();
    for (const tool of listed)
      if (!now.has(tool.name))
        now.set(tool.name, { tool, fingerprint: toolFingerprint(tool as Tool & Record<string, unknown>) });
    this.#listed.set(server, now);
    const approved = own(this.#lock.servers, server)?.tools;
    if (approved === undefined) {
      const entry = { tools: Object.fromEntries([...now].map(([name, t]) => [name, locked(t)])) };
      setOwn(this.#lock.servers, server, entry);
      // Another process may have pinned this server first: what it wrote stands.
      this.#write((lock) => {
        if (own(lock.servers, server) === undefined) setOwn(lock.servers, server, entry);
      });
      return { tools: [...listed], changes: [] };
    }
    const changes: ToolChange[] = [];
    const hold = policy !== "warn";
    for (const [name, listedNow] of now) {
      const { tool, fingerprint } = listedNow;
      const before = own(approved, name);
      if (before?.format === 1 && this.#renewed(server, name, before, listedNow)) continue;
      if (before?.fingerprint === fingerprint) continue;
      const change: ToolChange = {
        server,
        tool: name,
        kind: before === undefined ? "added" : "changed",
        held: hold,
        current: fingerprint,
        fields: diffTool(before?.tool, pinnedTool(tool as Tool & Record<string, unknown>)),
      };
      if (before !== undefined) change.pinned = before.fingerprint;
      changes.push(change);
    }
    for (const [name, before] of Object.entries(approved)) {
      if (now.has(name)) continue;
      changes.push({
        server,
        tool: name,
        kind: "removed",
        held: false,
        pinned: before.fingerprint,
        fields: diffTool(before.tool, undefined),
      });
    }
    const heldNames = new Set(changes.filter((c) => c.held).map((c) => c.tool));
    // A server held whole for a removal alone would lose tools nobody changed: hold it for changes and additions.
    const tools =
      policy === "hold-server" && heldNames.size > 0 ? [] : listed.filter((t) => !heldNames.has(t.name));
    return { tools, changes };
  }

  /**
   * A format-1 pin (see `LockedTool.format`) at the tool's first list since: renewed over every
   * pinned field (in memory and in the lock file) when the fields format 1 covered are as
   * approved and the tool opens no MCP App; `false` otherwise, and the tool is then compared as
   * any other (a changed format-1 field, or an app URI never approved, is a change).
   */
  #renewed(server: string, name: string, before: LockedTool, listed: ListedTool): boolean {
    const tool = listed.tool as Tool & Record<string, unknown>;
    if (toolFingerprint(tool, FORMAT_1_FIELDS) !== before.fingerprint || opensApp(tool)) return false;
    const renewed = locked(listed);
    const tools = own(this.#lock.servers, server)!.tools;
    setOwn(tools, name, renewed);
    // Another process may have renewed or trusted it first: what it wrote stands.
    this.#write((lock) => {
      const entry = own(lock.servers, server);
      const pinned = entry === undefined ? undefined : own(entry.tools, name);
      if (pinned?.format === 1 && pinned.fingerprint === before.fingerprint)
        setOwn(entry!.tools, name, renewed);
    });
    return true;
  }

  /**
   * Approves `server`'s tools as it listed them last: all of them, or only `tool` (a changed or
   * added tool is pinned as it is now, a removed one is forgotten). Written to the lock file
   * before it resolves. Returns the names approved.
   *
   * @throws McplexError `PIN_NOTHING_TO_TRUST` when the server has not listed its tools here,
   *   or has (or `tool` has) no change waiting.
   */
  async trust(server: string, tool?: string): Promise<string[]> {
    const listed = this.#listed.get(server);
    if (listed === undefined)
      throw new McplexError("PIN_NOTHING_TO_TRUST", `server "${server}" has not listed its tools here`, {
        server,
        hint: "start it first (is it enabled, pinned, and did it start?)",
      });
    const approved = own(this.#lock.servers, server)?.tools ?? {};
    const names = new Set([...listed.keys(), ...Object.keys(approved)]);
    const differs = (name: string) => own(approved, name)?.fingerprint !== listed.get(name)?.fingerprint;
    const chosen = tool === undefined ? [...names].filter(differs) : [tool];
    if (tool !== undefined && (!names.has(tool) || !differs(tool)))
      throw new McplexError(
        "PIN_NOTHING_TO_TRUST",
        `tool "${tool}" of server "${server}" has no change to trust`,
        {
          server,
          tool,
          hint: `run "mcplex list" to see what waits for approval`,
        },
      );
    if (chosen.length === 0)
      throw new McplexError("PIN_NOTHING_TO_TRUST", `server "${server}" has no change to trust`, {
        server,
        hint: "its tools are listed as they were approved",
      });
    const apply = (lock: PinLock) => {
      const entry = own(lock.servers, server) ?? { tools: {} };
      setOwn(lock.servers, server, entry);
      for (const name of chosen) {
        const now = listed.get(name);
        if (now === undefined) delete entry.tools[name];
        else setOwn(entry.tools, name, locked(now));
      }
    };
    apply(this.#lock);
    this.#write(apply);
    await this.flush();
    return chosen;
  }

  /** Resolves when what was changed so far is in the lock file; rejects with the first write error. */
  async flush(): Promise<void> {
    await this.#writes;
    if (this.#writeError !== undefined) {
      const error = this.#writeError;
      this.#writeError = undefined;
      throw error;
    }
  }

  #write(change: (lock: PinLock) => void): void {
    this.#writes = this.#writes
      .then(() => updatePinLock(this.path, change))
      .catch((error: unknown) => {
        this.#writeError ??= error;
      });
  }
}

/** A tool as its server listed it last, with its fingerprint. */
interface ListedTool {
  tool: Tool;
  fingerprint: string;
}

function locked(listed: ListedTool): LockedTool {
  return { fingerprint: listed.fingerprint, tool: pinnedTool(listed.tool as Tool & Record<string, unknown>) };
}

// Tool and server names are the servers' to choose: `__proto__` or `constructor` must be a name
// like any other, never a way to reach or replace an object's prototype.

/** `record[key]` when it is the record's own property. */
function own<T>(record: Record<string, T>, key: string): T | undefined {
  return Object.hasOwn(record, key) ? record[key] : undefined;
}

/** Sets `record[key]` as an own property, whatever the key. */
function setOwn<T>(record: Record<string, T>, key: string, value: T): void {
  Object.defineProperty(record, key, { value, enumerable: true, writable: true, configurable: true });
}
