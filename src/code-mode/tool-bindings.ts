import { McplexError } from "../errors.js";

/** A tool the script may call, as the caller lists it (the gateway's catalog entry). */
export interface CodeTool {
  /** The server that owns it: the namespace in the script (`tools.<server>.<name>`). */
  server: string;
  /** The tool's original name on its server. */
  name: string;
  /** The name the caller's `callTool` knows it by (the gateway's exposed name). */
  exposed: string;
  description?: string;
  inputSchema?: Record<string, unknown>;
  outputSchema?: Record<string, unknown>;
}

/** Where a tool appears in the script: `tools[namespace][method]`. */
export interface ToolBinding {
  namespace: string;
  method: string;
  tool: CodeTool;
}

const RESERVED = new Set(["__proto__", "constructor", "prototype", "then"]);

/**
 * A name as a JavaScript identifier: characters outside `[A-Za-z0-9_$]` become `_`, a leading
 * digit gets a `_` before it, and names an object cannot safely own as a plain property
 * (`__proto__`, `constructor`, `prototype`, `then`, which `await` would call) get a `_` after.
 */
export function toIdentifier(name: string): string {
  let id = name.replace(/[^A-Za-z0-9_$]/g, "_");
  if (id === "" || /^[0-9]/.test(id)) id = `_${id}`;
  return RESERVED.has(id) ? `${id}_` : id;
}

/** The first of `id`, `id_2`, `id_3`... not in `taken`, which it joins. */
function unique(id: string, taken: Set<string>): string {
  let candidate = id;
  for (let n = 2; taken.has(candidate); n++) candidate = `${id}_${n}`;
  taken.add(candidate);
  return candidate;
}

/**
 * Where each tool lives in the script, deterministic for a given set of tools whatever their
 * order: servers and tools sorted by name, and two names that make the same identifier
 * (`my-server` and `my_server`) told apart by `_2`, `_3` in that order.
 */
export function toolBindings(tools: readonly CodeTool[]): ToolBinding[] {
  const exposed = new Set<string>();
  for (const [i, tool] of tools.entries()) {
    for (const key of ["server", "name", "exposed"] as const) {
      if (typeof tool?.[key] !== "string" || tool[key] === "")
        throw new McplexError("INVALID_ARGUMENT", `tools[${i}].${key} must be a non-empty string.`, {
          path: `tools[${i}].${key}`,
          hint: "Pass each tool as { server, name, exposed, description?, inputSchema?, outputSchema? }.",
        });
    }
    if (exposed.has(tool.exposed))
      throw new McplexError("INVALID_ARGUMENT", `The tool "${tool.exposed}" is listed twice.`, {
        path: `tools[${i}].exposed`,
        hint: "List each tool once.",
      });
    exposed.add(tool.exposed);
  }
  const byName = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
  const sorted = [...tools].sort(
    (a, b) => byName(a.server, b.server) || byName(a.name, b.name) || byName(a.exposed, b.exposed),
  );
  const namespaces = new Map<string, { id: string; methods: Set<string> }>();
  const takenNamespaces = new Set<string>();
  return sorted.map((tool) => {
    let space = namespaces.get(tool.server);
    if (space === undefined) {
      space = { id: unique(toIdentifier(tool.server), takenNamespaces), methods: new Set() };
      namespaces.set(tool.server, space);
    }
    return { namespace: space.id, method: unique(toIdentifier(tool.name), space.methods), tool };
  });
}
