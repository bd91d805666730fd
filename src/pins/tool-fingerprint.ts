import { createHash } from "node:crypto";

/**
 * The fields of a tool a fingerprint covers: what a person or model reads (name, title,
 * description, annotations, icons), what a call must match (the schemas), and what decides how it
 * runs or what it opens: `execution` (task support) and, of `_meta`, the MCP App it opens
 * (`_meta.ui.resourceUri` and the older `_meta["ui/resourceUri"]`) and who sees it
 * (`_meta.ui.visibility`).
 */
export const PINNED_FIELDS = [
  "name",
  "title",
  "description",
  "inputSchema",
  "outputSchema",
  "annotations",
  "icons",
  "execution",
  "_meta",
] as const;

/** The fields lock format 1 covered (see {@link PINNED_FIELDS}; docs/pinning.md, "Format 1"). */
export const FORMAT_1_FIELDS = [
  "name",
  "title",
  "description",
  "inputSchema",
  "outputSchema",
  "annotations",
] as const satisfies readonly PinnedField[];

/** One of {@link PINNED_FIELDS}. */
export type PinnedField = (typeof PINNED_FIELDS)[number];

/** The pinned fields of a tool, as recorded in the lock file; absent fields stay absent. */
export type PinnedTool = { name: string } & Partial<Record<Exclude<PinnedField, "name">, unknown>>;

/**
 * The pinned fields of a tool as listed by its server: {@link PINNED_FIELDS}, of `_meta` only
 * the keys named there (the rest of `_meta` and any other field are left out: they change
 * without changing what the tool does, opens or tells a model). `fields` narrows them (the
 * format-1 fields, to compare with a pin of that format).
 */
export function pinnedTool(
  tool: { name: string } & Record<string, unknown>,
  fields: readonly PinnedField[] = PINNED_FIELDS,
): PinnedTool {
  const out: PinnedTool = { name: tool.name };
  for (const field of fields) {
    if (field === "name") continue;
    const value = field === "_meta" ? pinnedMeta(tool._meta) : tool[field];
    if (value !== undefined) out[field] = value;
  }
  return out;
}

/** The app URI keys of MCP Apps (SEP-1865): the current one under `ui`, and the older flat one. */
const APP_URI_KEY = "resourceUri";
const OLD_APP_URI_KEY = "ui/resourceUri";

/**
 * Of a tool's `_meta`, what is pinned: `ui.resourceUri`, `ui.visibility` and `"ui/resourceUri"`.
 * A `ui` that is not an object is pinned whole (whatever a client makes of it). `undefined` when
 * none is there.
 */
function pinnedMeta(meta: unknown): Record<string, unknown> | undefined {
  if (typeof meta !== "object" || meta === null || Array.isArray(meta)) return undefined;
  const record = meta as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  const ui = record.ui;
  if (typeof ui === "object" && ui !== null && !Array.isArray(ui)) {
    const { [APP_URI_KEY]: resourceUri, visibility } = ui as Record<string, unknown>;
    const pinned: Record<string, unknown> = {};
    if (resourceUri !== undefined) pinned[APP_URI_KEY] = resourceUri;
    if (visibility !== undefined) pinned.visibility = visibility;
    if (Object.keys(pinned).length > 0) out.ui = pinned;
  } else if (ui !== undefined) out.ui = ui;
  if (record[OLD_APP_URI_KEY] !== undefined) out[OLD_APP_URI_KEY] = record[OLD_APP_URI_KEY];
  return Object.keys(out).length === 0 ? undefined : out;
}

/** Whether a tool names an MCP App it opens (either form of the app URI). */
export function opensApp(tool: { _meta?: unknown }): boolean {
  const meta = pinnedMeta(tool._meta);
  if (meta === undefined) return false;
  const ui = meta.ui as Record<string, unknown> | undefined;
  return meta[OLD_APP_URI_KEY] !== undefined || (typeof ui === "object" && ui[APP_URI_KEY] !== undefined);
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
 * {@link pinnedTool} fields (all of them, or `fields`). Any change to a pinned field, however deep
 * in a schema, changes it.
 */
export function toolFingerprint(
  tool: { name: string } & Record<string, unknown>,
  fields: readonly PinnedField[] = PINNED_FIELDS,
): string {
  return pinnedFingerprint(pinnedTool(tool, fields));
}

/** The fingerprint of pinned fields as the lock file records them. */
export function pinnedFingerprint(pinned: PinnedTool): string {
  return `sha256:${createHash("sha256").update(canonicalJson(pinned), "utf8").digest("hex")}`;
}
