import type { CatalogMode } from "../config/types.js";
import { McplexError } from "../errors.js";

/**
 * How a client sees the catalog's tools:
 * - `all`: every tool, as today;
 * - `search`: a few meta-tools (`search_tools`, `describe_tools`, `call_tool`) instead of the
 *   catalog, for catalogs too large to send a model on every turn;
 * - `code`: `search_tools`, `describe_tools` and `run_code`, a sandboxed script in which every
 *   visible tool is an async function.
 *
 * Tools matching a `pin` glob stay visible as themselves in every mode.
 */
export type { CatalogMode };

/** The modes, for validation and help texts. */
export const CATALOG_MODES: readonly CatalogMode[] = ["all", "search", "code"];

/** A mode and the tools pinned beside its meta-tools (globs over exposed names). */
export interface ModeSettings {
  mode: CatalogMode;
  pin?: readonly string[];
}

/** Whether `value` names a {@link CatalogMode}. */
export function isCatalogMode(value: unknown): value is CatalogMode {
  return typeof value === "string" && (CATALOG_MODES as readonly string[]).includes(value);
}

/**
 * `value` as a {@link CatalogMode}, or an error that names where it came from (`--tools`,
 * `serve.mode`, ...) and the values allowed.
 */
export function parseCatalogMode(value: unknown, where: string): CatalogMode {
  if (isCatalogMode(value)) return value;
  throw new McplexError("INVALID_ARGUMENT", `${where}: unknown catalog mode ${JSON.stringify(value)}`, {
    path: where,
    hint: `use one of ${CATALOG_MODES.join(", ")}`,
  });
}
