import { McplexError, NotFoundError } from "../errors.js";

const CODES = {
  tool: "TOOL_NOT_FOUND",
  prompt: "PROMPT_NOT_FOUND",
  resource: "RESOURCE_NOT_FOUND",
  "resource template": "RESOURCE_NOT_FOUND",
  server: "INVALID_ARGUMENT",
  profile: "INVALID_ARGUMENT",
  task: "INVALID_ARGUMENT",
} as const;

/** A name the catalog does not have (or does not show through the profile in use). */
export function notFound(kind: keyof typeof CODES, name: string, profile?: string): NotFoundError {
  const scope = profile === undefined ? "" : ` in profile "${profile}"`;
  return new NotFoundError(CODES[kind], `unknown ${kind} "${name}"${scope}`, {
    ...(kind === "tool" ? { tool: name, hint: "run `mcplex list` to see the exposed tool names" } : {}),
  });
}

/** A call to a server the config keeps but does not run. */
export function disabledServer(name: string): McplexError {
  return new McplexError("UPSTREAM_UNAVAILABLE", `server "${name}" is disabled in the config`, {
    server: name,
    hint: `set servers.${name}.enabled to true`,
  });
}
