import { posix } from "node:path";

/**
 * The layering of src/ as docs/design/layers.md writes it: its picture (rows of folders, top to
 * bottom), what each folder may import, and the upward arrows still tolerated. A "unit" is a
 * folder under src/ (`hub`, or `ext/tasks` for an extension), or a file directly in src/
 * (`errors.ts`, `index.ts`).
 */
export interface LayerTable {
  /** The picture's rows, top first. */
  rows: string[][];
  /** Each unit and the units it may import, in the table's order. */
  mayImport: Map<string, string[]>;
  /** Upward imports still in the tree, as `from.ts -> to.ts` (paths under src/). */
  upwardArrows: string[];
}

export const LAYERS_DOC = "docs/design/layers.md";

/** The lines of the fenced block of `markdown` whose info string is `info`. */
function fencedBlock(markdown: string, info: string): string[] {
  const lines = markdown.split("\n");
  const start = lines.findIndex((line) => line.trim() === `\`\`\`${info}`);
  if (start < 0) throw new Error(`${LAYERS_DOC} has no \`\`\`${info} block`);
  const end = lines.findIndex((line, i) => i > start && line.trim() === "```");
  if (end < 0) throw new Error(`${LAYERS_DOC}: the \`\`\`${info} block is not closed`);
  return lines.slice(start + 1, end).filter((line) => line.trim() !== "");
}

/** Reads the table out of docs/design/layers.md's text; throws naming a line it cannot read. */
export function readLayerTable(markdown: string): LayerTable {
  const rows = fencedBlock(markdown, "layers").map((line) => line.trim().split(/\s+/));
  const mayImport = new Map<string, string[]>();
  // An indented line continues the one above it (long lists wrap under 120 characters).
  const entries: string[] = [];
  for (const line of fencedBlock(markdown, "may-import")) {
    if (/^\s/.test(line) && entries.length > 0) entries[entries.length - 1] += ` ${line.trim()}`;
    else entries.push(line);
  }
  for (const line of entries) {
    const match = /^(\S+): may import (.+)$/.exec(line.trim());
    if (match === null) throw new Error(`${LAYERS_DOC}: "${line}" is not "folder: may import a, b, c"`);
    const [, unit, list] = match as unknown as [string, string, string];
    if (mayImport.has(unit)) throw new Error(`${LAYERS_DOC}: ${unit} has two lines`);
    mayImport.set(unit, list === "nothing" ? [] : list.split(",").map((name) => name.trim()));
  }
  const upwardArrows = fencedBlock(markdown, "upward-arrows").map((line) => line.trim());
  return { rows, mayImport, upwardArrows };
}

/** The unit a file under src/ belongs to: `hub/hub.ts` is `hub`, `ext/tasks/x.ts` is `ext/tasks`. */
export function unitOf(file: string): string {
  const parts = file.split("/");
  if (parts.length === 1) return file;
  return parts[0] === "ext" && parts.length > 2 ? `ext/${parts[1]}` : parts[0]!;
}

/** Whether a unit is a file directly in src/ rather than a folder. */
export const isFileUnit = (unit: string) => unit.endsWith(".ts");

/** A rule that is not about folders, kept beside the layering in every override it applies to. */
interface ExtraRule {
  /** The specifiers it forbids from a file in `dir` (under src/). */
  group(dir: string): string[];
  message: string;
  /** The units it does not apply to. */
  except: string[];
}

const EXTRA_RULES: ExtraRule[] = [
  {
    group: (dir) => specifierGlobs(dir, ["testing"]),
    message:
      "Layering: src/testing/ (the mock LLM and other test aids of mcplex/testing) is for tests and users' tests; runtime code never imports it.",
    except: ["testing"],
  },
  {
    group: () => ["@redis/*", "redis", "ioredis"],
    message:
      "Layering: src/cluster/ is the only folder that talks to Redis (see docs/DESIGN.md, Shared state and replicas); elsewhere, use its interfaces.",
    except: ["cluster"],
  },
];

interface PatternGroup {
  group: string[];
  message: string;
}

/** One of biome.json's overrides that set `noRestrictedImports`. */
export interface ImportOverride {
  includes: string[];
  linter: { rules: { style: { noRestrictedImports: { level: "error"; options: { patterns: PatternGroup[] } } } } };
}

const override = (includes: string[], patterns: PatternGroup[]): ImportOverride => ({
  includes,
  linter: { rules: { style: { noRestrictedImports: { level: "error", options: { patterns } } } } },
});

/**
 * The specifiers, as biome globs, by which a file in directory `dir` (under src/) reaches the
 * `targets`: `../hub` and `../hub/**` from `gateway`, `../../hub` from `ext/tasks`,
 * `../skills` from `ext/tasks` to `ext/skills`, `./hub` from src/ itself, `../index.js` for a
 * file. Targets reached with the same run of `../` share one brace pattern.
 */
function specifierGlobs(dir: string, targets: string[]): string[] {
  const byPrefix = new Map<string, { folders: string[]; files: string[] }>();
  for (const target of targets) {
    const relative = posix.relative(dir, isFileUnit(target) ? target.replace(/\.ts$/, "") : target);
    const [, ups = "", rest = ""] = /^((?:\.\.\/)*)(.*)$/.exec(relative) ?? [];
    const prefix = ups === "" ? "./" : ups;
    const entry = byPrefix.get(prefix) ?? { folders: [], files: [] };
    (isFileUnit(target) ? entry.files : entry.folders).push(rest);
    byPrefix.set(prefix, entry);
  }
  const alternatives = (names: string[]) => (names.length === 1 ? names[0]! : `{${names.join(",")}}`);
  const globs: string[] = [];
  for (const [prefix, { folders, files }] of byPrefix) {
    if (folders.length > 0) {
      globs.push(`${prefix}${alternatives(folders)}`, `${prefix}${alternatives(folders)}/**`);
    }
    if (files.length > 0) {
      const names = files.flatMap((name) => [name, `${name}.js`, `${name}.ts`]);
      globs.push(`${prefix}${alternatives(names)}`);
    }
  }
  return globs;
}

/** The message of a unit's rule: what it may import, and where the table is. */
function layeringMessage(unit: string, allowed: string[]): string {
  const where = isFileUnit(unit) ? `src/${unit}` : `src/${unit}/`;
  if (allowed.length === 0) return `Layering: ${where} imports nothing of mcplex (the table in ${LAYERS_DOC}).`;
  const names = allowed.map((name) => (isFileUnit(name) ? name : `${name}/`)).join(", ");
  return `Layering: ${where} may import only ${names} of src/ (the table in ${LAYERS_DOC}).`;
}

/** The patterns of one override: the unit's layering group, then the rules kept beside it. */
function patternsFor(unit: string, dir: string, forbidden: string[], message: string): PatternGroup[] {
  const layering = forbidden.filter((target) => target !== "testing");
  const patterns: PatternGroup[] = [];
  if (layering.length > 0) patterns.push({ group: specifierGlobs(dir, layering), message });
  for (const rule of EXTRA_RULES) {
    if (!rule.except.includes(unit)) patterns.push({ group: rule.group(dir), message: rule.message });
  }
  return patterns;
}

/**
 * biome.json's `noRestrictedImports` overrides, generated from the table: first the rules that
 * are not about folders for all of src/ (but src/testing/ and src/cluster/); then for every unit, one
 * override for its files (`src/hub/*`) and one for the files of its subfolders (`src/hub/*\/**`,
 * whose specifiers take one more `../`; a file deeper still is left to the test), each forbidding
 * the units its line does not list; then,
 * for a file with a known upward arrow, one override of its own that lets those arrows through
 * and nothing more. Biome applies the last override that sets a rule, so each repeats the rules
 * that are not about folders (no src/testing/, Redis only in src/cluster/).
 */
export function layeringOverrides(table: LayerTable): ImportOverride[] {
  const units = [...table.mayImport.keys()];
  const forbiddenFor = (unit: string) => {
    const allowed = table.mayImport.get(unit) ?? [];
    return units.filter((target) => target !== unit && !allowed.includes(target));
  };
  const everywhere = EXTRA_RULES.map(({ group, message }) => ({
    group: [...new Set([...group("_"), ...group("_/_")])],
    message,
  }));
  const overrides: ImportOverride[] = [override(["src/**", "!src/testing/**", "!src/cluster/**"], everywhere)];
  for (const unit of units) {
    const forbidden = forbiddenFor(unit);
    const message = layeringMessage(unit, table.mayImport.get(unit) ?? []);
    if (isFileUnit(unit)) {
      overrides.push(override([`src/${unit}`], patternsFor(unit, "", forbidden, message)));
      continue;
    }
    overrides.push(override([`src/${unit}/*`], patternsFor(unit, unit, forbidden, message)));
    overrides.push(override([`src/${unit}/*/**`], patternsFor(unit, `${unit}/_`, forbidden, message)));
  }
  for (const [file, targets] of knownArrowsByFile(table.upwardArrows)) {
    const unit = unitOf(file);
    const forbidden = forbiddenFor(unit).filter((target) => !targets.has(target));
    const message = layeringMessage(unit, table.mayImport.get(unit) ?? []);
    overrides.push(override([`src/${file}`], patternsFor(unit, posix.dirname(file), forbidden, message)));
  }
  return overrides;
}

/** The known upward arrows grouped by importing file: the units each file may still reach. */
function knownArrowsByFile(arrows: string[]): Map<string, Set<string>> {
  const byFile = new Map<string, Set<string>>();
  for (const arrow of arrows) {
    const [from, to] = arrow.split(" -> ");
    if (from === undefined || to === undefined) throw new Error(`${LAYERS_DOC}: "${arrow}" is not "a.ts -> b.ts"`);
    const targets = byFile.get(from) ?? new Set<string>();
    targets.add(unitOf(to));
    byFile.set(from, targets);
  }
  return new Map([...byFile].sort(([a], [b]) => (a < b ? -1 : 1)));
}

/** Whether a biome override sets `noRestrictedImports`: the ones `layeringOverrides` owns. */
export function isImportOverride(entry: unknown): boolean {
  const rules = (entry as { linter?: { rules?: { style?: Record<string, unknown> } } }).linter?.rules;
  return rules?.style?.noRestrictedImports !== undefined;
}
