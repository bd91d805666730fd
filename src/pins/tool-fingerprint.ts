import { createHash } from "node:crypto";

/** The fields of a tool a fingerprint covers: what a model reads, and what a call must match. */
export const PINNED_FIELDS = [
  "name",
  "title",
  "description",
  "inputSchema",
  "outputSchema",
  "annotations",
] as const;

/** One of {@link PINNED_FIELDS}. */
export type PinnedField = (typeof PINNED_FIELDS)[number];

/** The pinned fields of a tool, as recorded in the lock file; absent fields stay absent. */
export type PinnedTool = { name: string } & Partial<Record<Exclude<PinnedField, "name">, unknown>>;

/**
 * The pinned fields of a tool as listed by its server (`_meta`, `icons` and any other field are
 * left out: they change without changing what the tool does or what a model is told).
 */
export function pinnedTool(tool: { name: string } & Record<string, unknown>): PinnedTool {
  const out: PinnedTool = { name: tool.name };
  for (const field of PINNED_FIELDS)
    if (field !== "name" && tool[field] !== undefined) out[field] = tool[field];
  return out;
}

/**
 * JSON with object keys sorted by code unit at every depth and no whitespace (RFC 8785 in
 * spirit: the same value gives the same text on every machine, whatever order a server wrote
 * its keys in). Array order is kept: it means something in a schema (`enum`, `required`).
 * `undefined` members are dropped, as `JSON.stringify` does.
 *
 * @example
 * canonicalJson({ b: 1, a: [2, { d: 3, c: 4 }] }); // '{"a":[2,{"c":4,"d":3}],"b":1}'
 */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== "object") return JSON.stringify(value) ?? "null";
  if (Array.isArray(value))
    return `[${value.map((v) => (v === undefined ? "null" : canonicalJson(v))).join(",")}]`;
  const keys = Object.keys(value)
    .filter((k) => (value as Record<string, unknown>)[k] !== undefined)
    .sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  const members = keys.map(
    (k) => `${JSON.stringify(k)}:${canonicalJson((value as Record<string, unknown>)[k])}`,
  );
  return `{${members.join(",")}}`;
}

/**
 * A tool's fingerprint: `sha256:` and the hex SHA-256 of the UTF-8 {@link canonicalJson} of its
 * {@link pinnedTool} fields. Any change to a pinned field, however deep in a schema, changes it.
 */
export function toolFingerprint(tool: { name: string } & Record<string, unknown>): string {
  return `sha256:${createHash("sha256")
    .update(canonicalJson(pinnedTool(tool)), "utf8")
    .digest("hex")}`;
}
