import { createRequire } from "node:module";
import type { Environment } from "@marcbachmann/cel-js";

// The CEL of `policies:`: one environment, declared here once, that `config check` compiles every
// rule against and the access layer evaluates them in. CEL is @marcbachmann/cel-js (no
// dependencies, typed environments, parse and type errors with their position), not a home-made
// evaluator. It is loaded with the first rule (about 50 ms), never by a config without any:
// reading a config is synchronous, so `require` (an ES module, which Node's engines here load).
const load = createRequire(import.meta.url);

/** A compiled `when`: its value for the variables of one request (throws when it cannot be evaluated). */
export type PolicyExpression = (variables: PolicyVariables) => unknown;

/** The variables a rule reads; see docs/guide/policies.md for every member. */
export interface PolicyVariables {
  caller: Record<string, unknown>;
  request: Record<string, unknown>;
  /** The result, in the response phase; an empty map in the request phase. */
  response: Record<string, unknown>;
  now: Date;
}

/** Bounds of one expression, so that a rule stays a condition, not a program. */
const LIMITS = {
  maxAstNodes: 500,
  maxDepth: 32,
  maxListElements: 200,
  maxMapEntries: 200,
  maxCallArguments: 8,
};

let environment: Environment | undefined;

/** The environment every rule is compiled in (made on first use: a config without rules loads no CEL). */
function policyEnvironment(): Environment {
  if (environment !== undefined) return environment;
  const cel = load("@marcbachmann/cel-js") as typeof import("@marcbachmann/cel-js");
  environment = new cel.Environment({ enableOptionalTypes: true, limits: LIMITS })
    .registerVariable("caller", "map")
    .registerVariable("request", "map")
    .registerVariable("response", "map")
    .registerVariable("now", "google.protobuf.Timestamp");
  return environment;
}

/**
 * Compiles a rule's `when`: the expression, or why it cannot be one (the parser's or the type
 * checker's message, with the line and column). A `when` must yield a bool.
 */
export function compilePolicyExpression(text: string): PolicyExpression | { problem: string } {
  let compiled: ReturnType<Environment["parse"]>;
  try {
    compiled = policyEnvironment().parse(text);
  } catch (error) {
    return { problem: celProblem(error, text) };
  }
  const checked = compiled.check();
  if (!checked.valid) return { problem: celProblem(checked.error, text) };
  if (checked.type !== "bool" && checked.type !== "dyn")
    return { problem: `yields ${checked.type}, and a condition must yield a bool (true or false)` };
  return compiled as PolicyExpression;
}

/**
 * A CEL error as one line: its first line (the library draws the expression under it, which a
 * one-line report cannot keep), and where in the condition it is, as line and column.
 */
export function celProblem(error: unknown, text?: string): string {
  const message = (error instanceof Error ? error.message : String(error)).split("\n")[0]!;
  const located = error as { node?: { pos?: unknown; start?: unknown }; range?: { start?: unknown } } | null;
  const pos = located?.node?.pos ?? located?.node?.start ?? located?.range?.start;
  if (typeof pos !== "number" || text === undefined) return message;
  const before = text.slice(0, pos);
  const line = before.split("\n").length;
  const column = pos - (before.lastIndexOf("\n") + 1) + 1;
  return `${message}, at line ${line}, column ${column} of the condition`;
}

/** An AST node of the CEL library, as far as {@link toolGuard} reads it. */
interface CelNode {
  op: string;
  args: unknown;
}

const isNode = (value: unknown): value is CelNode =>
  typeof value === "object" && value !== null && typeof (value as CelNode).op === "string";

/** `request.tool`, as a node. */
function isRequestTool(node: unknown): boolean {
  if (!isNode(node) || node.op !== "." || !Array.isArray(node.args)) return false;
  const [object, field] = node.args as [unknown, unknown];
  return field === "tool" && isNode(object) && object.op === "id" && object.args === "request";
}

/** The string of a literal node, else `undefined`. */
function literalString(node: unknown): string | undefined {
  return isNode(node) && node.op === "value" && typeof node.args === "string" ? node.args : undefined;
}

/**
 * The tools a condition can hold for, read from its tree: when the condition is a chain of `&&`
 * one of whose terms is `request.tool == "NAME"`, it is false for every other tool (CEL's `&&` is
 * false when a term is, whatever the others do, errors included), so a rule need not be
 * evaluated for them. `undefined` when the condition does not say (it may hold for any tool).
 */
export function toolGuard(expression: PolicyExpression): ReadonlySet<string> | undefined {
  const ast = (expression as { ast?: unknown }).ast;
  const guard = (node: unknown): Set<string> | undefined => {
    if (!isNode(node) || !Array.isArray(node.args)) return undefined;
    const [left, right] = node.args as [unknown, unknown];
    if (node.op === "&&") {
      const a = guard(left);
      const b = guard(right);
      if (a === undefined) return b;
      if (b === undefined) return a;
      return new Set([...a].filter((tool) => b.has(tool)));
    }
    if (node.op !== "==") return undefined;
    const named = isRequestTool(left)
      ? literalString(right)
      : isRequestTool(right)
        ? literalString(left)
        : undefined;
    return named === undefined ? undefined : new Set([named]);
  };
  return guard(ast);
}
