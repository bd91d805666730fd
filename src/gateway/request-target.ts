import type { Catalog } from "../catalog/catalog.js";
import type { RequestTarget } from "./pipeline.js";

/**
 * What a request names, looked up in `profile`'s view of the catalog: the one lookup of a
 * request's path (the route, the observers and the fronts' header checks all use it).
 * `undefined` for requests that name nothing; a target without `server` when the name is
 * unknown (a tool whose server is still starting is looked up again when it is ready).
 */
export function resolveTarget(
  catalog: Catalog,
  method: string,
  params: Record<string, unknown>,
  profile: string | undefined,
): RequestTarget | undefined {
  switch (method) {
    case "tools/call": {
      const name = params.name;
      if (typeof name !== "string") return undefined;
      const tool = catalog.resolveTool(name, profile);
      return tool === undefined ? { kind: "tool", name } : { kind: "tool", name, server: tool.server, tool };
    }
    case "prompts/get": {
      const name = params.name;
      if (typeof name !== "string") return undefined;
      const prompt = catalog.resolvePrompt(name, profile);
      return prompt === undefined
        ? { kind: "prompt", name }
        : { kind: "prompt", name, server: prompt.server, prompt };
    }
    case "resources/read": {
      const uri = params.uri;
      if (typeof uri !== "string") return undefined;
      const resource = catalog.resolveResource(uri, profile);
      return resource === undefined
        ? { kind: "resource", uri }
        : { kind: "resource", uri, server: resource.server, resource };
    }
    case "completion/complete": {
      const ref = params.ref as { type?: unknown; name?: unknown; uri?: unknown } | undefined;
      if (ref?.type === "ref/prompt" && typeof ref.name === "string")
        return resolveTarget(catalog, "prompts/get", { name: ref.name }, profile);
      if (typeof ref?.uri === "string")
        return resolveTarget(catalog, "resources/read", { uri: ref.uri }, profile);
      return undefined;
    }
    default:
      return undefined;
  }
}

/** The name or URI a target was asked for. */
export function targetName(target: RequestTarget): string {
  return target.kind === "resource" ? target.uri : target.name;
}
