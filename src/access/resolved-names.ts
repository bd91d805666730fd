import { qualifyUri } from "../catalog/resource-routing.js";
import type { RequestTarget } from "../hub/call-pipeline.js";

/**
 * The names authorization reads of a request's target: those of what it resolved to, never only
 * the alias the request used (an MCP App's unprefixed tool name, a task handle, a namespaced or
 * qualified URI).
 */
export interface ResolvedNames {
  /**
   * The server the target resolved to; for a tool whose per-user server could not open the
   * caller's connection yet, the server that refused (the call goes there once it can).
   */
  server: string | undefined;
  /**
   * The tool's exposed name (`server__tool`, as the catalog lists it); for a task's requests, the
   * tool whose call created the task.
   */
  tool: string | undefined;
  /** The prompt's exposed name. */
  prompt: string | undefined;
  /** Every URI that names the resource: as asked, as its server knows it, and qualified (`mcplex://`). */
  uris: string[];
}

/**
 * The {@link ResolvedNames} of `target`.
 *
 * @example
 * // An app calling `show_report`, which the catalog exposes as `alpha__show_report`:
 * resolvedNames(target); // { server: "alpha", tool: "alpha__show_report", prompt: undefined, uris: [] }
 */
export function resolvedNames(target: RequestTarget): ResolvedNames {
  const names: ResolvedNames = { server: target.server, tool: undefined, prompt: undefined, uris: [] };
  switch (target.kind) {
    case "tool":
      names.server ??= target.unreachable?.server;
      names.tool = target.tool?.name ?? target.name;
      break;
    case "task":
      names.tool = target.tool;
      break;
    case "prompt":
      names.prompt = target.prompt?.name ?? target.name;
      break;
    case "resource": {
      const resolved = target.resource;
      // A completion's template: the text as its server listed it, and qualified, like a URI.
      const own =
        target.template === undefined
          ? resolved
          : { server: target.template.server, uri: target.template.resourceTemplate.uriTemplate };
      names.uris =
        own === undefined
          ? [target.uri]
          : [...new Set([target.uri, own.uri, qualifyUri(own.server, own.uri)])];
      break;
    }
  }
  return names;
}
