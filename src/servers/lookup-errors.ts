import { McplexError, NOT_FOUND_CODES, NotFoundError } from "../errors.js";

/** A name the catalog does not have (or does not show through the profile in use). */
export function notFound(kind: keyof typeof NOT_FOUND_CODES, name: string, profile?: string): NotFoundError {
  const scope = profile === undefined ? "" : ` in profile "${profile}"`;
  return new NotFoundError(NOT_FOUND_CODES[kind], `unknown ${kind} "${name}"${scope}`, {
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
