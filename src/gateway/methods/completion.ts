import { RpcError } from "../../errors.js";
import { ErrorCode } from "../../protocol/error-codes.js";
import type { MethodHandlers } from "./method-handler.js";

/** `completion/complete`, sent to the server of the prompt or resource template its `ref` names. */
export const COMPLETION_METHODS: MethodHandlers = {
  "completion/complete": async (request, { dispatch }) => {
    const { params } = request;
    const ref = params.ref as { type?: string; name?: string; uri?: string } | undefined;
    const argument = params.argument as { name: string; value: string } | undefined;
    if (ref === undefined || argument === undefined) {
      throw new RpcError(
        ErrorCode.InvalidParams,
        "Invalid params: completion/complete needs ref and argument",
      );
    }
    return await dispatch(request);
  },
};
