import { RpcError } from "../../errors.js";
import { ErrorCode } from "../../protocol/error-codes.js";
import { type MethodHandlers, requireString } from "./method-handler.js";

/**
 * `resources/list` and `resources/templates/list` from the catalog, `resources/read` sent to
 * the resource's server.
 */
export const RESOURCE_METHODS: MethodHandlers = {
  "resources/list": async (request, { hub }) => ({
    resources: hub
      .resources(request.context.profile)
      .map((r) => (r.uri === r.resource.uri ? r.resource : { ...r.resource, uri: r.uri })),
  }),
  "resources/templates/list": async (request, { hub }) => ({
    resourceTemplates: hub
      .resourceTemplates(request.context.profile)
      .map((t) =>
        t.uriTemplate === t.resourceTemplate.uriTemplate
          ? t.resourceTemplate
          : { ...t.resourceTemplate, uriTemplate: t.uriTemplate },
      ),
  }),
  "resources/read": async (request, { dispatch }) => {
    const uri = requireString(request.params, "uri");
    const resource = request.target?.kind === "resource" ? request.target.resource : undefined;
    if (resource === undefined)
      throw new RpcError(ErrorCode.InvalidParams, `Resource not found: ${uri}`, { uri });
    return await dispatch(request);
  },
};
