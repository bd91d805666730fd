import { RpcError } from "../../errors.js";
import { ErrorCode } from "../../protocol/error-codes.js";
import type { MethodHandlers } from "./method-handler.js";

/**
 * `skills/list` (the skills extension): every skill of the servers the caller reaches, a merged
 * cursor paging through each in turn. `skills/get` and `resources/directory/read` are forwarded.
 */
export const SKILL_METHODS: MethodHandlers = {
  "skills/list": async (request, { hub }) => {
    const profile = request.context.profile;
    const cursor = request.params.cursor;
    if (cursor !== undefined && typeof cursor !== "string")
      throw new RpcError(ErrorCode.InvalidParams, "Invalid params: cursor must be a string");
    const page = await hub.listSkills({
      signal: request.callOptions.signal,
      ...(profile === undefined ? {} : { profile }),
      ...(cursor === undefined ? {} : { cursor }),
    });
    return page.nextCursor === undefined
      ? { skills: page.skills }
      : { skills: page.skills, nextCursor: page.nextCursor };
  },
};
