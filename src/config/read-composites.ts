import { describeValue, joinPath } from "./config-issues.js";
import type { CompositeToolConfig } from "./types.js";
import type { ValueReader } from "./value-reader.js";

const COMPOSITE_KEYS = ["title", "description", "inputSchema", "outputSchema", "annotations", "script"];
/** What every exposed tool name matches (see `tool-naming.ts`): a composite is listed as written. */
const TOOL_NAME = /^[A-Za-z0-9_-]{1,64}$/;
/** The server name composites are listed under (`tools.composite.NAME` in code mode). */
export const COMPOSITE_SERVER = "composite";

/**
 * `composites:`: a map of tool names to `{ description, inputSchema, script, title?, outputSchema?,
 * annotations? }`. The script is taken as written (no `${...}` expansion: it is code, and a
 * `${...}` in it is a template literal's).
 */
export function readComposites(
  reader: ValueReader,
  value: unknown,
): Record<string, CompositeToolConfig> | undefined {
  const node = reader.map(value ?? undefined, "composites");
  if (node === undefined) return undefined;
  const out: Record<string, CompositeToolConfig> = {};
  for (const [name, entry] of Object.entries(node)) {
    const path = joinPath("composites", name);
    if (!TOOL_NAME.test(name)) {
      reader.fail(path, `${describeValue(name)} cannot be a tool name; use 1-64 letters, digits, "_" or "-"`);
      continue;
    }
    const composite = readComposite(reader, entry, path);
    if (composite !== undefined) out[name] = composite;
  }
  return Object.keys(out).length === 0 ? undefined : out;
}

function readComposite(reader: ValueReader, value: unknown, path: string): CompositeToolConfig | undefined {
  const node = reader.map(value ?? undefined, path);
  if (node === undefined) {
    reader.fail(path, "needs description, inputSchema and script");
    return undefined;
  }
  reader.knownKeys(node, path, COMPOSITE_KEYS);
  const description = reader.nonEmpty(node.description, joinPath(path, "description"));
  if (node.description === undefined)
    reader.fail(joinPath(path, "description"), "is required: it is what a model reads to choose the tool");
  const script = typeof node.script === "string" ? node.script : undefined;
  if (script === undefined || script.trim() === "")
    reader.fail(
      joinPath(path, "script"),
      node.script === undefined
        ? "is required: the JavaScript the tool runs, e.g. return await tools.github.get_me({});"
        : `must be the script's text, not ${describeValue(node.script)}`,
    );
  const inputSchema = objectSchema(reader, node.inputSchema, joinPath(path, "inputSchema"), true);
  const outputSchema = objectSchema(reader, node.outputSchema, joinPath(path, "outputSchema"), false);
  const annotations = reader.map(node.annotations ?? undefined, joinPath(path, "annotations"));
  const title = reader.string(node.title, joinPath(path, "title"));
  if (description === undefined || script === undefined || inputSchema === undefined) return undefined;
  return {
    description,
    inputSchema,
    script,
    ...(title === undefined ? {} : { title }),
    ...(outputSchema === undefined ? {} : { outputSchema }),
    ...(annotations === undefined ? {} : { annotations }),
  };
}

function objectSchema(
  reader: ValueReader,
  value: unknown,
  path: string,
  required: boolean,
): Record<string, unknown> | undefined {
  if (value === undefined) {
    if (required)
      reader.fail(
        path,
        "is required: a JSON Schema such as { type: object, properties: { repo: { type: string } } }",
      );
    return undefined;
  }
  const node = reader.map(value, path);
  if (node === undefined) return undefined;
  if (node.type !== "object") {
    reader.fail(
      joinPath(path, "type"),
      `must be "object" (MCP tools take an object), not ${describeValue(node.type)}`,
    );
    return undefined;
  }
  return node;
}
