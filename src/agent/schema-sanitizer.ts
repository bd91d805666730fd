/**
 * Tool input schemas as each provider family accepts them. MCP servers write full JSON
 * Schema; Gemini takes an OpenAPI subset, OpenAI strict mode wants closed objects with
 * every property required.
 */
import type { ChatTool } from "./chat-types.js";
import type { AgentTool } from "./tool-host.js";

/** How to shape schemas: as they are (`default`), Gemini's subset, or OpenAI strict mode. */
export type SchemaProfile = "default" | "gemini" | "strict";

type Schema = Record<string, unknown>;

/**
 * Picks the schema profile from the configured provider name, else from the base URL.
 *
 * @example resolveSchemaProfile({ baseUrl: "https://generativelanguage.googleapis.com/v1beta/openai" }) // "gemini"
 */
export function resolveSchemaProfile(options: { provider?: string; baseUrl?: string }): SchemaProfile {
  const provider = options.provider?.toLowerCase() ?? "";
  if (provider === "gemini" || provider === "google") return "gemini";
  if (provider === "strict" || provider === "openai-strict") return "strict";
  if (provider !== "") return "default";
  if (options.baseUrl?.includes("generativelanguage.googleapis.com")) return "gemini";
  return "default";
}

/** Turns catalog tools into the request's `tools`, schemas sanitised for the profile. */
export function toChatTools(tools: readonly AgentTool[], profile: SchemaProfile): ChatTool[] {
  return tools.map((tool) => {
    const { parameters, strict } = sanitizeSchema(tool.inputSchema, profile);
    const fn: ChatTool["function"] = { name: tool.name, parameters };
    if (tool.description !== undefined) fn.description = tool.description;
    if (strict) fn.strict = true;
    return { type: "function", function: fn };
  });
}

/**
 * Sanitises one tool input schema. `strict` is true when the result is valid for
 * OpenAI strict mode (free-form objects cannot be, and fall back to non-strict).
 */
export function sanitizeSchema(
  schema: Record<string, unknown>,
  profile: SchemaProfile,
): { parameters: Record<string, unknown>; strict: boolean } {
  const base = structuredClone(schema) as Schema;
  delete base.$schema;
  if (base.type === undefined && base.anyOf === undefined) base.type = "object";
  if (base.type === "object" && base.properties === undefined) base.properties = {};
  if (profile === "gemini") return { parameters: toGemini(base, base, []), strict: false };
  if (profile === "strict") {
    const strict = toStrict(base);
    return strict ? { parameters: strict, strict: true } : { parameters: base, strict: false };
  }
  return { parameters: base, strict: false };
}

const GEMINI_KEYS = new Set([
  "type",
  "format",
  "title",
  "description",
  "nullable",
  "enum",
  "maxItems",
  "minItems",
  "properties",
  "required",
  "minProperties",
  "maxProperties",
  "minLength",
  "maxLength",
  "pattern",
  "anyOf",
  "propertyOrdering",
  "items",
  "minimum",
  "maximum",
]);
const GEMINI_FORMATS: Record<string, string[]> = {
  string: ["enum", "date-time"],
  number: ["float", "double"],
  integer: ["int32", "int64"],
};

function resolveRef(root: Schema, ref: string): Schema | undefined {
  if (!ref.startsWith("#/")) return undefined;
  let node: unknown = root;
  for (const part of ref.slice(2).split("/")) {
    const key = part.replace(/~1/g, "/").replace(/~0/g, "~");
    node = typeof node === "object" && node !== null ? (node as Schema)[key] : undefined;
  }
  return typeof node === "object" && node !== null ? (node as Schema) : undefined;
}

function toGemini(node: Schema, root: Schema, refs: string[]): Schema {
  if (typeof node.$ref === "string") {
    const ref = node.$ref;
    const target = refs.includes(ref) ? undefined : resolveRef(root, ref);
    // A recursive or non-local reference cannot be inlined: keep an open object.
    if (!target) return withDescription({ type: "object" }, node.description);
    const { $ref: _, ...siblings } = node;
    return toGemini({ ...target, ...siblings }, root, [...refs, ref]);
  }
  let work: Schema = { ...node };
  if (Array.isArray(work.allOf) && work.allOf.length > 0) {
    for (const part of work.allOf as Schema[]) work = mergeSchemas(work, part);
    delete work.allOf;
  }
  const alternatives = (work.anyOf ?? work.oneOf) as Schema[] | undefined;
  delete work.oneOf;
  if (Array.isArray(alternatives)) {
    const nonNull = alternatives.filter((alt) => alt.type !== "null");
    if (nonNull.length < alternatives.length) work.nullable = true;
    delete work.anyOf;
    if (nonNull.length === 1) work = { ...nonNull[0], ...work };
    else if (nonNull.length > 1) work.anyOf = nonNull;
  }
  if (Array.isArray(work.type)) {
    const types = (work.type as string[]).filter((t) => t !== "null");
    if (types.length < work.type.length) work.nullable = true;
    if (types.length === 1) work.type = types[0];
    else {
      delete work.type;
      work.anyOf = types.map((type) => ({ type }));
    }
  }
  if (work.const !== undefined) work.enum = [work.const];
  const out: Schema = {};
  for (const [key, value] of Object.entries(work)) if (GEMINI_KEYS.has(key)) out[key] = value;
  if (out.enum !== undefined && out.type !== undefined && out.type !== "string") {
    out.description = [out.description, `One of: ${JSON.stringify(out.enum)}.`].filter(Boolean).join(" ");
    delete out.enum;
  } else if (Array.isArray(out.enum)) out.enum = out.enum.map(String);
  if (typeof out.format === "string" && !GEMINI_FORMATS[String(out.type)]?.includes(out.format))
    delete out.format;
  if (typeof out.properties === "object" && out.properties !== null) {
    const props = Object.entries(out.properties as Record<string, Schema>);
    if (props.length === 0) delete out.properties;
    else out.properties = Object.fromEntries(props.map(([k, v]) => [k, toGemini(v, root, refs)]));
  }
  if (Array.isArray(out.required)) {
    const names = new Set(Object.keys((out.properties as Schema | undefined) ?? {}));
    out.required = (out.required as string[]).filter((name) => names.has(name));
    if ((out.required as string[]).length === 0) delete out.required;
  }
  if (out.type === "array") {
    out.items =
      typeof out.items === "object" && out.items !== null
        ? toGemini(out.items as Schema, root, refs)
        : { type: "string" };
  }
  if (Array.isArray(out.anyOf)) out.anyOf = (out.anyOf as Schema[]).map((alt) => toGemini(alt, root, refs));
  return out;
}

function mergeSchemas(a: Schema, b: Schema): Schema {
  const merged: Schema = { ...b, ...a };
  if (a.properties || b.properties)
    merged.properties = { ...(b.properties as Schema), ...(a.properties as Schema) };
  if (Array.isArray(a.required) || Array.isArray(b.required)) {
    merged.required = [
      ...new Set([...((a.required as string[]) ?? []), ...((b.required as string[]) ?? [])]),
    ];
  }
  return merged;
}

function withDescription(schema: Schema, description: unknown): Schema {
  return typeof description === "string" ? { ...schema, description } : schema;
}

const STRICT_DROP = [
  "$schema",
  "default",
  "examples",
  "minLength",
  "maxLength",
  "minProperties",
  "maxProperties",
  "uniqueItems",
  "patternProperties",
  "propertyNames",
];

/** OpenAI strict mode; undefined when the schema cannot be expressed strictly. */
function toStrict(node: Schema): Schema | undefined {
  const out: Schema = { ...node };
  for (const key of STRICT_DROP) delete out[key];
  if (out.allOf !== undefined || out.not !== undefined || out.if !== undefined) return undefined;
  if (out.oneOf !== undefined) {
    out.anyOf = out.oneOf;
    delete out.oneOf;
  }
  for (const key of ["$defs", "definitions"]) {
    if (typeof out[key] === "object" && out[key] !== null) {
      const defs: Schema = {};
      for (const [name, def] of Object.entries(out[key] as Record<string, Schema>)) {
        const strictDef = toStrict(def);
        if (!strictDef) return undefined;
        defs[name] = strictDef;
      }
      out[key] = defs;
    }
  }
  if (Array.isArray(out.anyOf)) {
    const alts = (out.anyOf as Schema[]).map(toStrict);
    if (alts.some((alt) => alt === undefined)) return undefined;
    out.anyOf = alts;
  }
  if (typeof out.items === "object" && out.items !== null) {
    const items = toStrict(out.items as Schema);
    if (!items) return undefined;
    out.items = items;
  }
  const isObject = out.type === "object" || (Array.isArray(out.type) && out.type.includes("object"));
  if (!isObject) return out;
  const props = out.properties as Record<string, Schema> | undefined;
  if (!props || (out.additionalProperties !== undefined && out.additionalProperties !== false))
    return undefined;
  const required = new Set((out.required as string[] | undefined) ?? []);
  const strictProps: Schema = {};
  for (const [name, prop] of Object.entries(props)) {
    const strictProp = toStrict(prop);
    if (!strictProp) return undefined;
    strictProps[name] = required.has(name) ? strictProp : nullable(strictProp);
  }
  out.properties = strictProps;
  out.required = Object.keys(strictProps);
  out.additionalProperties = false;
  return out;
}

/** Optional properties become required-but-nullable, the strict-mode way to say "optional". */
function nullable(input: Schema): Schema {
  const schema = Array.isArray(input.enum) ? { ...input, enum: [...input.enum, null] } : input;
  if (typeof schema.type === "string") return { ...schema, type: [schema.type, "null"] };
  if (Array.isArray(schema.type))
    return schema.type.includes("null") ? schema : { ...schema, type: [...schema.type, "null"] };
  if (Array.isArray(schema.anyOf)) return { ...schema, anyOf: [...schema.anyOf, { type: "null" }] };
  return { anyOf: [schema, { type: "null" }] };
}
