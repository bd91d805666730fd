/**
 * The factory of the conformance "everything" server: one definition of every tool, resource
 * and prompt the official server suite exercises, served to both protocol eras.
 */
import { McpServer } from "@modelcontextprotocol/server";
import { registerClientInputTools } from "./client-input-tools.js";
import { registerContentTools } from "./content-tools.js";
import { registerInputRequiredTools, requestStateCodec } from "./input-required-tools.js";
import { type ListChangeNotifier, registerListChangeTriggers } from "./list-change-triggers.js";
import { registerPrompts, registerResources } from "./resources-and-prompts.js";

export type Era = "legacy" | "modern";

export interface EverythingServerOptions {
  /** The era the instance serves (the SDK's factory context says which). */
  era: Era;
  /**
   * Where `test_trigger_tool_change` / `test_trigger_prompt_change` announce the change. Over
   * 2026 HTTP every request has its own instance, so the change must go to the handler's bus;
   * by default the instance announces it itself (stdio listen streams, 2025 sessions).
   */
  notifier?: ListChangeNotifier;
}

export const SERVER_INFO = { name: "mcplex-conformance-everything", version: "0.1.0" } as const;

/**
 * Builds one server instance.
 *
 * @example
 * serveStdio(({ era }) => buildEverythingServer({ era }));
 */
export function buildEverythingServer(options: EverythingServerOptions): McpServer {
  const server = new McpServer(SERVER_INFO, {
    capabilities: {
      tools: { listChanged: true },
      resources: { subscribe: true, listChanged: true },
      prompts: { listChanged: true },
      completions: {},
      // Deprecated in 2026 but still served; 2025 needs it for logging/setLevel.
      logging: {},
    },
    instructions: "Fixture server for the MCP conformance server suite.",
    // Tampered or expired state is refused with -32602 before any handler runs.
    requestState: { verify: requestStateCodec.verify },
  });
  const notifier = options.notifier ?? {
    toolsChanged: () => server.sendToolListChanged(),
    promptsChanged: () => server.sendPromptListChanged(),
  };
  registerContentTools(server);
  registerListChangeTriggers(server, notifier);
  registerClientInputTools(server);
  registerInputRequiredTools(server);
  registerResources(server, options.era);
  registerPrompts(server);
  return server;
}
