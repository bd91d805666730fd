import type { Catalog } from "../catalog/catalog.js";
import type { CatalogPrompt, CatalogResourceTemplate } from "../catalog/types.js";
import { notFound } from "../servers/lookup-errors.js";
import type { CallRequest, JsonObject } from "./call-pipeline.js";

/** Where a `completion/complete` goes: its server, the params it gets, and what its ref named. */
export interface CompletionRoute {
  server: string;
  sent: JsonObject;
  prompt?: CatalogPrompt;
  template?: CatalogResourceTemplate;
}

/**
 * The server a `completion/complete`'s ref names, and the params as that server gets them (the
 * ref in the server's own names): a prompt's from the request's `target` when it was resolved
 * there for the same name, else looked up; a resource template's likewise.
 *
 * @throws NotFoundError when the ref names nothing the caller's profile sees.
 */
export function completionRoute(
  catalog: Catalog,
  params: JsonObject,
  profile: string | undefined,
  target: CallRequest["target"],
): CompletionRoute {
  const ref = params.ref as { type?: string; name?: unknown; uri?: unknown } | undefined;
  if (ref?.type === "ref/prompt") {
    const name = String(ref.name);
    const prompt =
      target?.kind === "prompt" && target.name === name && target.prompt !== undefined
        ? target.prompt
        : catalog.resolvePrompt(name, profile);
    if (prompt === undefined) throw notFound("prompt", name, profile);
    return {
      prompt,
      server: prompt.server,
      sent: completionParams(params, { type: "ref/prompt", name: prompt.originalName }),
    };
  }
  const uri = String(ref?.uri);
  const template =
    target?.kind === "resource" && target.uri === uri && target.template !== undefined
      ? target.template
      : catalog.resolveResourceTemplate(uri, profile);
  if (template === undefined) throw notFound("resource template", uri, profile);
  return {
    template,
    server: template.server,
    sent: completionParams(params, { type: "ref/resource", uri: template.resourceTemplate.uriTemplate }),
  };
}

/** A `completion/complete`'s params for its server: the ref in the server's names, no `_meta`. */
function completionParams(params: JsonObject, ref: Record<string, unknown>): JsonObject {
  const sent: JsonObject = { ref, argument: params.argument };
  if (params.context !== undefined) sent.context = params.context;
  return sent;
}
