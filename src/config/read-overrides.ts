import { describeValue, joinPath } from "./config-issues.js";
import type { ArgumentOverride, ToolOverrideConfig } from "./types.js";
import type { ValueReader } from "./value-reader.js";

const OVERRIDE_KEYS = ["name", "title", "description", "annotations", "arguments"] as const;
const ARGUMENT_KEYS = ["value", "default"] as const;
/** What a renamed tool may be called: what every exposed name matches (see `tool-naming.ts`). */
const NEW_NAME = /^[A-Za-z0-9_-]{1,64}$/;

/**
 * Whether an `overrides:` key is a glob (matches many tools) rather than one tool's name: it has
 * a character picomatch gives a meaning to. (Read here without picomatch, which the config's
 * reading need not load.)
 */
export function isGlobKey(key: string): boolean {
  return /[*?[\]{}()!+@]/.test(key);
}

/**
 * Reads `overrides:` of a server (keys: globs over its own tool names) or of a profile (keys:
 * globs over exposed names): `{ search_code: { name: code_search, description: { append: "…" },
 * annotations: { readOnlyHint: true }, arguments: { org: { value: acme }, per_page: { default: 20 } } } }`.
 * Strings in argument values have their `${...}` expanded like any other config value.
 */
export function readOverrides(
  reader: ValueReader,
  value: unknown,
  path: string,
): { overrides?: Record<string, ToolOverrideConfig> } {
  const node = reader.map(value ?? undefined, path);
  if (node === undefined) return {};
  const overrides: Record<string, ToolOverrideConfig> = {};
  for (const [key, entry] of Object.entries(node)) {
    const entryPath = joinPath(path, key);
    if (key === "") {
      reader.fail(entryPath, 'an empty key names no tool; use a tool name or a glob such as "*"');
      continue;
    }
    const read = readOverride(reader, entry, entryPath, isGlobKey(key));
    if (read !== undefined) overrides[key] = read;
  }
  return Object.keys(overrides).length === 0 ? {} : { overrides };
}

function readOverride(
  reader: ValueReader,
  value: unknown,
  path: string,
  glob: boolean,
): ToolOverrideConfig | undefined {
  const node = reader.map(value ?? undefined, path);
  if (node === undefined) {
    if (value === undefined || value === null)
      reader.fail(path, "is empty; give name, title, description, annotations or arguments");
    return undefined;
  }
  reader.knownKeys(node, path, OVERRIDE_KEYS);
  const out: ToolOverrideConfig = {};
  const name = reader.string(node.name, joinPath(path, "name"));
  if (name !== undefined) {
    if (glob)
      reader.fail(
        joinPath(path, "name"),
        "renames one tool only: this entry's key is a glob; give the tool's own name as the key",
      );
    else if (!NEW_NAME.test(name))
      reader.fail(
        joinPath(path, "name"),
        `${describeValue(name)} cannot be a tool name; use 1-64 letters, digits, "_" or "-"`,
      );
    else out.name = name;
  }
  const title = reader.string(node.title, joinPath(path, "title"));
  if (title !== undefined) out.title = title;
  const description = readDescription(reader, node.description, joinPath(path, "description"));
  if (description !== undefined) out.description = description;
  const annotations = reader.map(node.annotations ?? undefined, joinPath(path, "annotations"));
  if (annotations !== undefined)
    out.annotations = expandStrings(reader, annotations, joinPath(path, "annotations"));
  const args = readArguments(reader, node.arguments, joinPath(path, "arguments"));
  if (args !== undefined) out.arguments = args;
  return out;
}

function readDescription(
  reader: ValueReader,
  value: unknown,
  path: string,
): ToolOverrideConfig["description"] | undefined {
  if (value === undefined) return undefined;
  if (typeof value === "string") return reader.string(value, path);
  const node = reader.map(value, path);
  if (node === undefined) return undefined;
  reader.knownKeys(node, path, ["append"]);
  const append = reader.string(node.append, joinPath(path, "append"));
  if (append === undefined) {
    if (node.append === undefined)
      reader.fail(path, 'must be a text (the new description) or { append: "text added after it" }');
    return undefined;
  }
  return { append };
}

function readArguments(
  reader: ValueReader,
  value: unknown,
  path: string,
): Record<string, ArgumentOverride> | undefined {
  const node = reader.map(value ?? undefined, path);
  if (node === undefined) return undefined;
  const out: Record<string, ArgumentOverride> = {};
  for (const [name, entry] of Object.entries(node)) {
    const argPath = joinPath(path, name);
    const arg = reader.map(entry ?? undefined, argPath);
    if (arg === undefined) {
      if (entry === undefined || entry === null || typeof entry !== "object")
        reader.fail(
          argPath,
          `must be { value: … } (fixed, hidden from the client) or { default: … }, not ${describeValue(entry)}`,
        );
      continue;
    }
    reader.knownKeys(arg, argPath, ARGUMENT_KEYS);
    const has = ARGUMENT_KEYS.filter((k) => k in arg);
    if (has.length !== 1) {
      reader.fail(
        argPath,
        has.length === 0
          ? "needs value (fixed, hidden from the client) or default (used when the client gives none)"
          : "takes value or default, not both: a fixed value is never the client's to change",
      );
      continue;
    }
    const given = expandStrings(reader, arg[has[0]!], joinPath(argPath, has[0]!));
    out[name] = has[0] === "value" ? { value: given } : { default: given };
  }
  return out;
}

/** `value` with `${...}` expanded in every string in it, at any depth. */
function expandStrings<T>(reader: ValueReader, value: T, path: string): T {
  if (typeof value === "string") return (reader.string(value, path) ?? value) as T;
  if (Array.isArray(value)) return value.map((v, i) => expandStrings(reader, v, joinPath(path, i))) as T;
  if (value !== null && typeof value === "object") {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k] = expandStrings(reader, v, joinPath(path, k));
    return out as T;
  }
  return value;
}
