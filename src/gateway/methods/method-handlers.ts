import { TASK_METHODS } from "../../ext/tasks/task-methods.js";
import { COMPLETION_METHODS } from "./completion.js";
import { DISCOVER_METHODS } from "./discover.js";
import type { MethodHandler, MethodHandlers } from "./method-handler.js";
import { PROMPT_METHODS } from "./prompts.js";
import { RESOURCE_METHODS } from "./resources.js";
import { SKILL_METHODS } from "./skills.js";
import { SUBSCRIPTION_METHODS } from "./subscriptions.js";
import { TOOL_METHODS } from "./tools.js";

/**
 * The gateway's handlers, by method: one file per concept. A method the gateway answers itself
 * is a row of `protocol/method-table.ts` and a handler here; a forwarded row needs a handler
 * only to check its params first (a row without one is sent to the server its target names).
 * The methods a client session answers before the pipeline (`initialize`, `logging/setLevel`,
 * `subscriptions/listen`: see `client-session.ts`) have none.
 */
export const METHOD_HANDLERS: ReadonlyMap<string, MethodHandler> = handlerTable(
  DISCOVER_METHODS,
  TOOL_METHODS,
  PROMPT_METHODS,
  RESOURCE_METHODS,
  COMPLETION_METHODS,
  SUBSCRIPTION_METHODS,
  SKILL_METHODS,
  TASK_METHODS,
);

/** One table of the files' handlers; a method two files answer is a mistake said at load. */
function handlerTable(...files: MethodHandlers[]): ReadonlyMap<string, MethodHandler> {
  const table = new Map<string, MethodHandler>();
  for (const handlers of files) {
    for (const [method, handler] of Object.entries(handlers)) {
      if (table.has(method)) throw new TypeError(`${method} has two handlers in src/gateway/methods/`);
      table.set(method, handler);
    }
  }
  return table;
}
