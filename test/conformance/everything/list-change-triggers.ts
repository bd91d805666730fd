/**
 * The diagnostic hooks of the `server-stateless` scenario: `test_trigger_tool_change` and
 * `test_trigger_prompt_change` change the tool or prompt list for real, then announce it. A real
 * change matters in front of a proxy: the gateway re-lists on an upstream's `list_changed` and
 * tells its own clients only when a list differs (an announcement of nothing is not forwarded).
 */
import type { McpServer } from "@modelcontextprotocol/server";
import * as z from "zod/v4";

/** Where the trigger tools announce list changes (the HTTP handler's bus, or the instance itself). */
export interface ListChangeNotifier {
  toolsChanged(): void;
  promptsChanged(): void;
}

// Per process, not per instance: over 2026 HTTP every request builds a fresh instance, which must
// list what the last trigger left.
const changes = { tools: 0, prompts: 0 };

const toolDescription = () => `Changes the tool list (this description, changed ${changes.tools} times).`;
const promptDescription = () => `Changed by test_trigger_prompt_change ${changes.prompts} times.`;

export function registerListChangeTriggers(server: McpServer, notifier: ListChangeNotifier): void {
  const noArgs = z.object({});
  const done = (text: string) => ({ content: [{ type: "text" as const, text }] });

  const trigger = server.registerTool(
    "test_trigger_tool_change",
    { description: toolDescription(), inputSchema: noArgs },
    () => {
      changes.tools += 1;
      // Set, not update(): update() would announce on this instance, twice with the notifier's.
      trigger.description = toolDescription();
      notifier.toolsChanged();
      return done("tool list changed and announced");
    },
  );

  const changing = server.registerPrompt(
    "test_changing_prompt",
    { description: promptDescription() },
    () => ({
      messages: [{ role: "user", content: { type: "text", text: "A prompt whose description changes." } }],
    }),
  );

  server.registerTool(
    "test_trigger_prompt_change",
    { description: "Changes the prompt list (test_changing_prompt) and announces it.", inputSchema: noArgs },
    () => {
      changes.prompts += 1;
      changing.description = promptDescription();
      notifier.promptsChanged();
      return done("prompt list changed and announced");
    },
  );
}
