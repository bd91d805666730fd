import type { ConfigIssue, McplexErrorCode } from "../errors.js";
import { configErrorFrom } from "./config-issues.js";

/** Looks a secret up by name; `undefined` when the store has no such secret. */
export type SecretResolver = (name: string) => string | undefined;

/** Where `${...}` references get their values from. */
export interface ExpandContext {
  /** Environment variables for `${VAR}` and `${env:VAR}`. */
  env: Readonly<Record<string, string | undefined>>;
  /** Secrets for `${secret:NAME}`; without it every secret reference is missing. */
  secret?: SecretResolver;
  /** Receives every value that came from a secret, so callers can redact it. */
  onSecret?: (value: string) => void;
}

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
const SECRET_NAME = /^[A-Za-z_][A-Za-z0-9_.-]*$/;
const REFERENCE = /^(?:(secret|env|input|user):)?([^:]*)(?::-([\s\S]*))?$/;

class ExpansionProblem extends Error {
  constructor(
    readonly code: McplexErrorCode,
    message: string,
  ) {
    super(message);
  }
}

/**
 * Expands `${VAR}`, `${VAR:-default}`, `${env:VAR}` and `${secret:NAME}` in one string.
 *
 * - `${VAR:-default}` uses the default when VAR is unset or empty; defaults may hold references.
 * - `${user:NAME}` is kept as written: the hub fills it per signed-in user (`credentials: per-user`).
 * - `$${` is a literal `${` (so `$${HOME}` stays `${HOME}`); a lone `$` or `$VAR` is kept as is.
 * - A missing variable without default is CONFIG_VARIABLE_MISSING, a missing secret SECRET_MISSING;
 *   both are ConfigErrors whose `path` is the `path` given here.
 *
 * @example
 * expandVariables("Bearer ${GITHUB_TOKEN}", { env: process.env }, "servers.github.headers.Authorization")
 */
export function expandVariables(text: string, context: ExpandContext, path = ""): string {
  try {
    return expand(text, context);
  } catch (error) {
    if (!(error instanceof ExpansionProblem)) throw error;
    const issue: ConfigIssue = { code: error.code, path, message: error.message };
    throw configErrorFrom("config", [issue]);
  }
}

/** Whether a string holds anything `expandVariables` would change. */
export function hasReferences(text: string): boolean {
  return text.includes("${");
}

function expand(text: string, context: ExpandContext): string {
  if (!hasReferences(text)) return text;
  let out = "";
  let i = 0;
  while (i < text.length) {
    if (text.startsWith("$${", i)) {
      out += "${";
      i += 3;
    } else if (text.startsWith("${", i)) {
      const end = closingBrace(text, i + 2);
      if (end < 0) {
        throw new ExpansionProblem(
          "CONFIG_INVALID",
          `unterminated "\${" in ${JSON.stringify(text)}; close it with "}" or write "$\${" for a literal "\${"`,
        );
      }
      out += resolve(text.slice(i + 2, end), context);
      i = end + 1;
    } else {
      out += text[i];
      i += 1;
    }
  }
  return out;
}

/** Index of the `}` closing a reference that starts at `from`, counting nested `${`. */
function closingBrace(text: string, from: number): number {
  let depth = 1;
  for (let j = from; j < text.length; j++) {
    if (text.startsWith("${", j)) {
      depth += 1;
      j += 1;
    } else if (text[j] === "}") {
      depth -= 1;
      if (depth === 0) return j;
    }
  }
  return -1;
}

function resolve(inner: string, context: ExpandContext): string {
  const match = REFERENCE.exec(inner);
  const kind = match?.[1] ?? "env";
  const name = match?.[2] ?? "";
  const fallback = match?.[3];
  if (kind === "input") {
    throw new ExpansionProblem(
      "CONFIG_INVALID",
      `"\${input:${name}}" is a VS Code prompt, which mcplex cannot show; ` +
        `store the value with \`mcplex secrets set ${name}\` and write "\${secret:${name}}"`,
    );
  }
  const pattern = kind === "secret" || kind === "user" ? SECRET_NAME : ENV_NAME;
  if (match === null || !pattern.test(name)) {
    throw new ExpansionProblem(
      "CONFIG_INVALID",
      `"\${${inner}}" is not a valid reference; write \${VAR}, \${VAR:-default} or \${secret:NAME}, ` +
        `or "$\${" for a literal "\${"`,
    );
  }
  if (kind === "user") {
    // Each signed-in user's own value, filled when that user's connection opens: kept as written.
    if (fallback !== undefined)
      throw new ExpansionProblem(
        "CONFIG_INVALID",
        `"\${${inner}}" cannot have a default: each user sets the value; write \${user:${name}}`,
      );
    return `\${user:${name}}`;
  }
  if (kind === "secret") {
    const value = context.secret?.(name);
    if (value !== undefined) {
      context.onSecret?.(value);
      return value;
    }
    if (fallback !== undefined) return expand(fallback, context);
    throw new ExpansionProblem(
      "SECRET_MISSING",
      `secret "${name}" is not in the secret store; add it with \`mcplex secrets set ${name}\``,
    );
  }
  const value = context.env[name];
  if (fallback !== undefined && (value === undefined || value === "")) return expand(fallback, context);
  if (value === undefined) {
    throw new ExpansionProblem(
      "CONFIG_VARIABLE_MISSING",
      `environment variable ${name} is not set; set it (export ${name}=...) ` +
        `or give a default with \${${name}:-default}`,
    );
  }
  return value;
}
