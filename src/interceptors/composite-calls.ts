import type { CatalogTool } from "../catalog/types.js";
import { COMPOSITE_SERVER } from "../config/read-composites.js";
import { userRefOf } from "../credentials/user-ref.js";
import { RpcError } from "../errors.js";
import type { CallRequest, Handler, Interceptor, JsonObject, RequestContext } from "../hub/call-pipeline.js";
import { interceptor } from "../hub/call-pipeline.js";
import type { Hub } from "../hub/hub.js";
import { ErrorCode } from "../protocol/error-codes.js";
import { innerToolCall } from "./catalog-views.js";

/**
 * The gateway's layer that runs composite tools (`composites:`): a call of one runs its script,
 * and each call the script makes is a new `tools/call` request of the same caller run from the
 * top of the gateway's pipeline, through every layer a direct call passes (profile, policies,
 * guardrails, quotas, audit trail, spans, metrics, dashboard). While the config has no
 * composite, the layer hands back `next` when the pipeline is composed: no call passes it.
 */
export function compositeCalls(
  hub: Hub,
  request: (id: string, method: string, params: JsonObject, context: RequestContext) => CallRequest,
  run: Handler,
): Interceptor {
  return interceptor({ needs: "raw" }, (next) => {
    if (!hub.catalog.servers().includes(COMPOSITE_SERVER)) return next;
    return (req) => {
      const target = req.target;
      if (req.method !== "tools/call" || target?.kind !== "tool" || target.server !== COMPOSITE_SERVER)
        return next(req);
      return composite(req, target.tool);
    };
  });

  async function composite(req: CallRequest, tool: CatalogTool | undefined): Promise<JsonObject> {
    const definition = tool === undefined ? undefined : hub.composite(tool.originalName);
    if (tool === undefined || definition === undefined)
      throw new RpcError(ErrorCode.InvalidParams, `Unknown tool: ${String(req.params.name)}`);
    const args = req.params.arguments ?? {};
    if (typeof args !== "object" || args === null || Array.isArray(args))
      throw new RpcError(ErrorCode.InvalidParams, "Invalid params: arguments must be an object");
    const { context } = req;
    const { runComposite } = await import("../ext/composites/run-composite.js");
    let inner = 0;
    return (await runComposite({
      composite: definition,
      name: tool.name,
      args: args as Record<string, unknown>,
      tools: hub.modelTools(context.profile, userRefOf(context.identity)),
      signal: context.signal,
      ...(context.caller === undefined ? {} : { caller: context.caller }),
      callTool: (name, toolArgs, signal) =>
        innerToolCall(
          run,
          request(
            `${req.id}/${++inner}`,
            "tools/call",
            { name, arguments: toolArgs },
            signal === context.signal ? context : { ...context, signal },
          ),
          name,
        ),
    })) as JsonObject;
  }
}
