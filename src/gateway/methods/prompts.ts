import { RpcError } from "../../errors.js";
import { ErrorCode } from "../../protocol/error-codes.js";
import { type MethodHandlers, requireString } from "./method-handler.js";

/** `prompts/list` from the catalog, `prompts/get` sent to the prompt's server. */
export const PROMPT_METHODS: MethodHandlers = {
  "prompts/list": async (request, { hub }) => ({
    prompts: hub
      .prompts(request.context.profile)
      .map((p) => (p.name === p.prompt.name ? p.prompt : { ...p.prompt, name: p.name })),
  }),
  "prompts/get": async (request, { dispatch }) => {
    const name = requireString(request.params, "name");
    const prompt = request.target?.kind === "prompt" ? request.target.prompt : undefined;
    if (prompt === undefined)
      throw new RpcError(ErrorCode.InvalidParams, `Unknown prompt: ${name}`, { name });
    return await dispatch(request);
  },
};
