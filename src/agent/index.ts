/**
 * The agent loop: `runAgent` with its event stream, the OpenAI-compatible `ChatClient`, and
 * the parts a loop of one's own is made of (tool-call assembly across provider quirks, text
 * tool calls, schema sanitising, one tool call run the way `runAgent` runs it). The mock LLM
 * server for tests is in `mcplex/testing`.
 */

export { SEARCH_TOOLS_NAME } from "../catalog/search-tools-tool.js";
export type {
  AgentDoneEvent,
  AgentEvent,
  AgentNoticeCode,
  AgentOutcome,
  AgentUsage,
} from "./agent-events.js";
export type { AgentRun } from "./agent-run.js";
export { ChatClient, type ChatClientOptions, type ChatRequestOptions } from "./chat-client.js";
export type {
  ChatCompletion,
  ChatCompletionChunk,
  ChatCompletionRequest,
  ChatMessage,
  ChatTool,
  ChatToolCall,
  ChatToolCallDelta,
  ChatUsage,
} from "./chat-types.js";
export { type ExecuteToolCallContext, executeToolCall, type ToolCallOutcome } from "./execute-tool-call.js";
export { type LlmFlags, type ResolvedLlmConfig, resolveLlmConfig } from "./llm-config.js";
export { LlmError, type LlmErrorFields, type LlmErrorKind } from "./llm-error.js";
export { type AgentLlm, type AgentTracer, type RunAgentOptions, runAgent } from "./run-agent.js";
export { resolveSchemaProfile, type SchemaProfile, sanitizeSchema, toChatTools } from "./schema-sanitizer.js";
export {
  type TextToolCallMode,
  type TextToolCallOutput,
  TextToolCallParser,
} from "./text-tool-call-parser.js";
export { type ParsedToolCall, ToolCallAccumulator } from "./tool-call-accumulator.js";
export type { AgentSkill, AgentTool, LoadedAgentSkill, ToolHost } from "./tool-host.js";
