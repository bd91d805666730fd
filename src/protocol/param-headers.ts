/**
 * `x-mcp-header` (MCP 2026-07-28, Streamable HTTP): a tool's input schema may name
 * arguments whose values the client mirrors into `Mcp-Param-{Name}` request headers,
 * so that gateways and load balancers can route without parsing the body.
 */

/** One annotated argument: where it sits in `arguments`, and the header suffix. */
export interface ParamHeader {
  path: string[];
  name: string;
}

/** A tool's annotations, or why its schema is invalid (such tools must not be offered). */
export type ParamHeaderScan = { valid: true; headers: ParamHeader[] } | { valid: false; reason: string };

const KEY = "x-mcp-header";
/** RFC 9110 `token`: no spaces, delimiters, control characters or non-ASCII. */
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
const PRIMITIVE_TYPES = new Set(["string", "integer", "boolean"]);
/** Keywords whose subschemas are not reachable through a plain `properties` chain. */
const UNREACHABLE = [
  "items",
  "prefixItems",
  "contains",
  "additionalProperties",
  "unevaluatedProperties",
  "unevaluatedItems",
  "propertyNames",
  "oneOf",
  "anyOf",
  "allOf",
  "not",
  "if",
  "then",
  "else",
];
/** Keywords whose value maps names to subschemas. */
const UNREACHABLE_MAPS = ["patternProperties", "dependentSchemas", "$defs", "definitions"];

/**
 * Collects a tool's `x-mcp-header` annotations and checks every rule the spec puts on
 * them: a non-empty token, unique ignoring case, on a `string`/`integer`/`boolean`
 * property reachable from the root through `properties` only.
 */
export function scanParamHeaders(inputSchema: unknown): ParamHeaderScan {
  const headers: ParamHeader[] = [];
  const seen = new Set<string>();
  const visit = (node: unknown, path: string[], reachable: boolean): string | undefined => {
    if (typeof node !== "object" || node === null || Array.isArray(node)) return undefined;
    const schema = node as Record<string, unknown>;
    if (KEY in schema) {
      const where = path.length === 0 ? "the schema root" : path.join(".");
      const name = schema[KEY];
      if (!reachable || path.length === 0) return `${KEY} on ${where} is not reachable through properties`;
      if (typeof name !== "string" || name === "") return `${KEY} on ${where} is empty or not a string`;
      if (!TOKEN.test(name)) return `${KEY} "${name}" on ${where} is not a valid header name`;
      if (typeof schema.type !== "string" || !PRIMITIVE_TYPES.has(schema.type)) {
        return `${KEY} on ${where} is on a ${String(schema.type ?? "untyped")} property (string, integer or boolean only)`;
      }
      if (seen.has(name.toLowerCase())) return `${KEY} "${name}" is declared twice`;
      seen.add(name.toLowerCase());
      headers.push({ path, name });
    }
    const properties = schema.properties;
    if (typeof properties === "object" && properties !== null) {
      for (const [key, child] of Object.entries(properties)) {
        const fault = visit(child, [...path, key], reachable);
        if (fault !== undefined) return fault;
      }
    }
    const branches = [
      ...UNREACHABLE.flatMap((k) => (Array.isArray(schema[k]) ? (schema[k] as unknown[]) : [schema[k]])),
      ...UNREACHABLE_MAPS.flatMap((k) =>
        typeof schema[k] === "object" && schema[k] !== null ? Object.values(schema[k] as object) : [],
      ),
    ];
    for (const branch of branches) {
      const fault = visit(branch, path, false);
      if (fault !== undefined) return fault;
    }
    return undefined;
  };
  const fault = visit(inputSchema, [], true);
  return fault === undefined ? { valid: true, headers } : { valid: false, reason: fault };
}

/**
 * The `Mcp-Param-*` headers of one `tools/call`. Absent and `null` values send no
 * header; so do values that are not a primitive a header can carry exactly.
 */
export function paramHeaders(headers: readonly ParamHeader[], args: unknown): Record<string, string> {
  const out: Record<string, string> = {};
  for (const { path, name } of headers) {
    const value = valueAt(args, path);
    const text =
      typeof value === "string"
        ? value
        : typeof value === "boolean" || (typeof value === "number" && Number.isSafeInteger(value))
          ? String(value)
          : undefined;
    if (text !== undefined) out[`Mcp-Param-${name}`] = encodeHeaderValue(text);
  }
  return out;
}

function valueAt(args: unknown, path: readonly string[]): unknown {
  let value = args;
  for (const key of path) {
    if (typeof value !== "object" || value === null) return undefined;
    value = (value as Record<string, unknown>)[key];
  }
  return value;
}

/**
 * A value as an HTTP field value: as-is when it is plain visible ASCII without
 * surrounding whitespace, otherwise `=?base64?{base64 of its UTF-8}?=` (also used
 * for values that already look like that form, so they cannot be misread).
 */
export function encodeHeaderValue(value: string): string {
  const plain =
    /^[\x20-\x7e]*$/.test(value) &&
    value === value.trim() &&
    !(value.startsWith("=?base64?") && value.endsWith("?="));
  return plain ? value : `=?base64?${Buffer.from(value, "utf8").toString("base64")}?=`;
}
