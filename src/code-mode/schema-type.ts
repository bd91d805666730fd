/**
 * A JSON Schema as a TypeScript type, for a model to read: objects with optional and required
 * members (JSDoc from descriptions), enums and consts as unions of literals, arrays, tuples,
 * anyOf/oneOf/allOf, local `$ref`s; `unknown` for what a type cannot say (or a schema too deep
 * or recursive). The text depends only on the schema.
 */

type Schema = Record<string, unknown>;

const MAX_DEPTH = 12;
const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/;

/** How far in, and the root for `$ref`s. */
interface Walk {
  root: Schema;
  depth: number;
  indent: string;
  refs: readonly string[];
}

const isSchema = (value: unknown): value is Schema =>
  value !== null && typeof value === "object" && !Array.isArray(value);

/** A property name as written in a type literal. */
export function propertyKey(name: string): string {
  return IDENTIFIER.test(name) ? name : JSON.stringify(name);
}

/** A JSDoc block (or nothing) from a schema's description and default, at `indent`. */
export function jsDoc(schema: unknown, indent: string): string {
  if (!isSchema(schema)) return "";
  const lines: string[] = [];
  if (typeof schema.description === "string" && schema.description.trim() !== "")
    lines.push(...schema.description.trim().split(/\r?\n/));
  if (schema.default !== undefined) {
    const shown = JSON.stringify(schema.default);
    if (shown !== undefined && shown.length <= 200) lines.push(`@default ${shown}`);
  }
  if (lines.length === 0) return "";
  const safe = lines.map((line) => line.replace(/\*\//g, "*\\/").trimEnd());
  if (safe.length === 1) return `${indent}/** ${safe[0]} */\n`;
  return `${indent}/**\n${safe.map((line) => `${indent} *${line === "" ? "" : ` ${line}`}`).join("\n")}\n${indent} */\n`;
}

const literal = (value: unknown): string | undefined =>
  value === null || ["string", "number", "boolean"].includes(typeof value)
    ? JSON.stringify(value)
    : undefined;

/** Parenthesises a union or intersection before `[]`. */
const element = (type: string) => (/[|&]/.test(type) && !/^[{[(]/.test(type) ? `(${type})[]` : `${type}[]`);

function union(types: string[]): string {
  const unique = [...new Set(types)];
  if (unique.includes("unknown")) return "unknown";
  return unique.length === 0 ? "never" : unique.join(" | ");
}

function resolveRef(ref: string, walk: Walk): Schema | boolean | undefined {
  const match = /^#\/(\$defs|definitions)\/([^/]+)$/.exec(ref);
  if (match === null) return undefined;
  const defs = walk.root[match[1] as string];
  const target = isSchema(defs)
    ? defs[
        decodeURIComponent(match[2] as string)
          .replace(/~1/g, "/")
          .replace(/~0/g, "~")
      ]
    : undefined;
  return isSchema(target) || typeof target === "boolean" ? target : undefined;
}

function objectType(schema: Schema, walk: Walk): string {
  const properties = isSchema(schema.properties) ? schema.properties : {};
  const required = new Set(
    Array.isArray(schema.required) ? schema.required.filter((r) => typeof r === "string") : [],
  );
  const names = Object.keys(properties);
  const extra = schema.additionalProperties;
  if (names.length === 0) {
    if (isSchema(extra)) return `Record<string, ${typeOf(extra, { ...walk, depth: walk.depth + 1 })}>`;
    return extra === false ? "{}" : "Record<string, unknown>";
  }
  const inner = `${walk.indent}  `;
  const members = names.map((name) => {
    const property = properties[name];
    const type = typeOf(property, { ...walk, depth: walk.depth + 1, indent: inner });
    return `${jsDoc(property, inner)}${inner}${propertyKey(name)}${required.has(name) ? "" : "?"}: ${type};\n`;
  });
  if (extra === true || isSchema(extra)) members.push(`${inner}[key: string]: unknown;\n`);
  return `{\n${members.join("")}${walk.indent}}`;
}

function typeOfType(type: string, schema: Schema, walk: Walk): string {
  switch (type) {
    case "string":
      return "string";
    case "number":
    case "integer":
      return "number";
    case "boolean":
      return "boolean";
    case "null":
      return "null";
    case "array": {
      const next = { ...walk, depth: walk.depth + 1 };
      const tuple = Array.isArray(schema.prefixItems)
        ? schema.prefixItems
        : Array.isArray(schema.items)
          ? schema.items
          : undefined;
      if (tuple !== undefined) {
        const parts = tuple.map((item) => typeOf(item, next));
        const rest = Array.isArray(schema.items) ? schema.additionalItems : schema.items;
        if (rest === false) return `[${parts.join(", ")}]`;
        return `[${[...parts, `...${element(rest === undefined || rest === true ? "unknown" : typeOf(rest, next))}`].join(", ")}]`;
      }
      return element(schema.items === undefined ? "unknown" : typeOf(schema.items, next));
    }
    case "object":
      return objectType(schema, walk);
    default:
      return "unknown";
  }
}

/** The TypeScript type of `schema` (nested object types indented from `walk.indent`). */
function typeOf(schema: unknown, walk: Walk): string {
  if (schema === false) return "never";
  if (!isSchema(schema) || walk.depth > MAX_DEPTH) return "unknown";
  const nullable = schema.nullable === true ? " | null" : "";
  if (typeof schema.$ref === "string") {
    if (walk.refs.includes(schema.$ref)) return "unknown";
    const target = resolveRef(schema.$ref, walk);
    if (target === undefined) return "unknown";
    return typeOf(target, { ...walk, depth: walk.depth + 1, refs: [...walk.refs, schema.$ref] }) + nullable;
  }
  if ("const" in schema) return (literal(schema.const) ?? "unknown") + nullable;
  if (Array.isArray(schema.enum)) {
    const literals = schema.enum.map(literal);
    return (literals.some((l) => l === undefined) ? "unknown" : union(literals as string[])) + nullable;
  }
  const next = { ...walk, depth: walk.depth + 1 };
  for (const key of ["anyOf", "oneOf"] as const) {
    const options = schema[key];
    if (Array.isArray(options) && options.length > 0)
      return union(options.map((o) => typeOf(o, next))) + nullable;
  }
  if (Array.isArray(schema.allOf) && schema.allOf.length > 0) {
    const parts = [...new Set(schema.allOf.map((o) => typeOf(o, next)))].filter((t) => t !== "unknown");
    return parts.length === 0 ? "unknown" : parts.map((t) => (/[|]/.test(t) ? `(${t})` : t)).join(" & ");
  }
  const types = Array.isArray(schema.type)
    ? schema.type.filter((t): t is string => typeof t === "string")
    : typeof schema.type === "string"
      ? [schema.type]
      : isSchema(schema.properties) || schema.additionalProperties !== undefined
        ? ["object"]
        : schema.items !== undefined || schema.prefixItems !== undefined
          ? ["array"]
          : [];
  if (types.length === 0) return "unknown";
  return union(types.map((type) => typeOfType(type, schema, walk))) + nullable;
}

/** The TypeScript type of a JSON Schema, nested lines indented from `indent`. */
export function schemaType(schema: unknown, indent = ""): string {
  return typeOf(schema, { root: isSchema(schema) ? schema : {}, depth: 0, indent, refs: [] });
}

/** Whether a tool's input schema has no required property (its argument may be left out). */
export function allOptional(schema: unknown): boolean {
  return !isSchema(schema) || !Array.isArray(schema.required) || schema.required.length === 0;
}
