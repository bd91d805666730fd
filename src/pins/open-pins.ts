import { resolve } from "node:path";
import type { McplexConfig } from "../config/types.js";
import { lockFilePath } from "./pin-lock-file.js";
import { ToolPins } from "./tool-pins.js";

/**
 * Whether any server of `config` is pinned (`pin:` other than `off`): only then is the lock
 * file opened, and this module loaded at all (commands check with this before importing it).
 */
export function usesPins(config: McplexConfig): boolean {
  return [...config.servers, ...(config.available ?? [])].some((s) => s.pin !== undefined && s.pin !== "off");
}

/**
 * The pins of a config from a file: its lock file beside it (`mcplex.yaml` → `mcplex.lock.json`),
 * read now. A config built in code (no file) keeps its lock in the working directory.
 *
 * @throws PinLockError when the lock file is unreadable or not a lock file.
 */
export function openPins(config: McplexConfig): Promise<ToolPins> {
  const source = config.source === "<default>" ? "mcplex.yaml" : config.source;
  return ToolPins.open(lockFilePath(resolve(source)));
}
