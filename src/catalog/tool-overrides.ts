import type { Tool } from "@modelcontextprotocol/client";
import picomatch from "picomatch";
import type { ToolOverrideConfig } from "../config/types.js";
import type { CatalogCollision, CatalogTool } from "./types.js";

/**
 * Tool overrides (`overrides:` of a server or a profile): how a tool is shown (name, title,
 * description, annotations, a schema without its fixed arguments) and what is added to its
 * calls on the way to the server. The catalog applies them when it builds its entries, so
 * lists, search, code mode and the agent loop all read the overridden entry; the server's own
 * definition stays in `CatalogTool.tool` (what pins fingerprint).
 */

/** The `overrides:` entries that apply to a name, in the order written; empty when none does. */
export type OverrideMatcher = (name: string) => readonly ToolOverrideConfig[];

const NONE: readonly ToolOverrideConfig[] = [];

/** Compiles `overrides:` once (per server snapshot or profile set); `undefined` when there are none. */
export function compileOverrides(
  overrides: Record<string, ToolOverrideConfig> | undefined,
): OverrideMatcher | undefined {
  if (overrides === undefined) return undefined;
  const entries = Object.entries(overrides);
  if (entries.length === 0) return undefined;
  // Names are flat strings, as in tool-filter.ts: `*` matches across `/` and dots.
  const rules = entries.map(([glob, override]) => {
    const match = picomatch(glob.replaceAll("/", "\uE000"), { dot: true });
    return { matches: (name: string) => match(name.replaceAll("/", "\uE000")), override };
  });
  return (name) => {
    let found: ToolOverrideConfig[] | undefined;
    for (const rule of rules) {
      if (!rule.matches(name)) continue;
      if (found === undefined) found = [];
      found.push(rule.override);
    }
    return found ?? NONE;
  };
}

/** The new name the entries give (the last that gives one), if any. */
export function renameOf(overrides: readonly ToolOverrideConfig[]): string | undefined {
  let name: string | undefined;
  for (const o of overrides) if (o.name !== undefined) name = o.name;
  return name;
}

/**
 * `tool` as `overrides` show it, under `name` (already made unique by the caller). The server's
 * own definition (`tool.tool`) is kept; fixed and default arguments go in `argumentOverrides`
 * for {@link sentArguments}, over any an earlier layer (the server's) set.
 */
export function overriddenTool(
  tool: CatalogTool,
  overrides: readonly ToolOverrideConfig[],
  name: string,
  localName: string | undefined,
): CatalogTool {
  const out: CatalogTool = { ...tool, name };
  if (localName !== undefined) out.localName = localName;
  const fixed: Record<string, unknown> = { ...tool.argumentOverrides?.fixed };
  const defaults: Record<string, unknown> = { ...tool.argumentOverrides?.defaults };
  for (const o of overrides) {
    if (o.title !== undefined) out.title = o.title;
    if (typeof o.description === "string") out.description = o.description;
    else if (o.description !== undefined)
      out.description =
        out.description === undefined || out.description === ""
          ? o.description.append
          : `${out.description}\n\n${o.description.append}`;
    if (o.annotations !== undefined) out.annotations = { ...out.annotations, ...o.annotations };
    for (const [arg, given] of Object.entries(o.arguments ?? {})) {
      if ("value" in given) {
        fixed[arg] = given.value;
        delete defaults[arg];
      } else {
        defaults[arg] = given.default;
        delete fixed[arg];
      }
    }
  }
  const hasFixed = Object.keys(fixed).length > 0;
  const hasDefaults = Object.keys(defaults).length > 0;
  if (hasFixed || hasDefaults) {
    out.argumentOverrides = { ...(hasFixed ? { fixed } : {}), ...(hasDefaults ? { defaults } : {}) };
    // From the server's schema: the fixed and default arguments gathered here are every layer's.
    out.inputSchema = shownSchema(tool.tool.inputSchema, fixed, defaults);
  }
  out.listed = listedOf(out);
  return out;
}

/**
 * The schema a client sees: fixed arguments gone (from `properties` and `required`), defaults
 * written as the property's `default` and no longer required.
 */
function shownSchema(
  schema: CatalogTool["inputSchema"],
  fixed: Record<string, unknown>,
  defaults: Record<string, unknown>,
): CatalogTool["inputSchema"] {
  const properties: Record<string, object> = { ...(schema.properties as Record<string, object> | undefined) };
  for (const arg of Object.keys(fixed)) delete properties[arg];
  for (const [arg, value] of Object.entries(defaults))
    properties[arg] = { ...(properties[arg] ?? {}), default: value };
  const shown = { ...schema, properties } as CatalogTool["inputSchema"];
  if (Array.isArray(schema.required)) {
    const required = schema.required.filter((r) => !(r in fixed) && !(r in defaults));
    if (required.length > 0) shown.required = required;
    else delete shown.required;
  }
  return shown;
}

/** The tool as clients list it: the server's definition with the entry's name, texts and schema. */
function listedOf(tool: CatalogTool): Tool {
  const listed: Tool = { ...tool.tool, name: tool.name, inputSchema: tool.inputSchema };
  for (const key of ["title", "description", "annotations"] as const) {
    if (tool[key] === undefined) delete listed[key];
    else (listed as Record<string, unknown>)[key] = tool[key];
  }
  if (tool.meta !== undefined) listed._meta = tool.meta;
  return listed;
}

/**
 * The tool as `tools/list` shows it: the server's own definition when nothing differs (no
 * copy), else under its exposed name with what the catalog changed (overrides, an app's URI).
 */
export function listedTool(tool: CatalogTool): Tool {
  if (tool.listed !== undefined) return tool.listed;
  if (tool.meta !== undefined) return { ...tool.tool, name: tool.name, _meta: tool.meta };
  return tool.name === tool.tool.name ? tool.tool : { ...tool.tool, name: tool.name };
}

/**
 * The arguments a call sends its server: the caller's, with defaults where it gave none and
 * fixed values always (a caller cannot change them: they are not in its schema). The caller's
 * object itself when the tool has no argument overrides.
 */
export function sentArguments(tool: CatalogTool, args: Record<string, unknown>): Record<string, unknown> {
  const given = tool.argumentOverrides;
  if (given === undefined) return args;
  const sent: Record<string, unknown> = { ...given.defaults, ...args };
  for (const key of Object.keys(given.defaults ?? {}))
    if (sent[key] === undefined) sent[key] = given.defaults![key];
  return given.fixed === undefined ? sent : Object.assign(sent, given.fixed);
}

/** A profile's tools with its overrides applied (see {@link profileTools}). */
export interface ProfileTools {
  /** In catalog order. */
  tools: CatalogTool[];
  /** By the name the profile shows. */
  byName: Map<string, CatalogTool>;
  /** Renames not made: the name was the profile's already. */
  collisions: CatalogCollision[];
}

/**
 * The tools a profile reaches with its `overrides:` applied. A rename to a name another of its
 * tools has (as it is, or renamed too) is not made, for any of them: the tools keep their
 * catalog names (unique), so no rename can take a call meant for another tool, and the clash is
 * reported as a collision (`mcplex doctor`, `mcplex list`).
 */
export function profileTools(
  tools: readonly CatalogTool[],
  overrides: OverrideMatcher,
  profile: string,
): ProfileTools {
  const applying = tools.map((t) => overrides(t.name));
  const wanted = tools.map((t, i) => renameOf(applying[i]!) ?? t.name);
  const names = [...wanted];
  const collisions: CatalogCollision[] = [];
  // Reverting a rename gives a tool back its catalog name, which may be another rename's target:
  // again until no name is claimed twice (at worst every rename reverted: catalog names are unique).
  for (let changed = true; changed; ) {
    changed = false;
    const claims = new Map<string, number>();
    for (const name of names) claims.set(name, (claims.get(name) ?? 0) + 1);
    names.forEach((name, i) => {
      if (name === tools[i]!.name || claims.get(name)! < 2) return;
      names[i] = tools[i]!.name;
      changed = true;
    });
  }
  const reverted = new Set<string>();
  wanted.forEach((name, i) => {
    if (names[i] !== name) reverted.add(name);
  });
  for (const name of reverted) {
    const members = tools
      .filter((t, i) => wanted[i] === name || t.name === name)
      .map((t) => ({ server: t.server, originalName: t.originalName, exposedName: t.name }));
    collisions.push({ kind: "tool", name: `${name} (profile ${profile})`, members });
  }
  const out = tools.map((t, i) => {
    const renamed = names[i] !== t.name;
    return applying[i]!.length === 0
      ? t
      : overriddenTool(t, applying[i]!, names[i]!, renamed ? names[i] : t.localName);
  });
  return { tools: out, byName: new Map(out.map((t) => [t.name, t])), collisions };
}
