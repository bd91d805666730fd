/**
 * The agent loop: `runAgent` with its event stream, the OpenAI-compatible `ChatClient`, and
 * the parts a loop of one's own is made of (tool-call assembly across provider quirks, text
 * tool calls, schema sanitising, one tool call run the way `runAgent` runs it). The mock LLM
 * server for tests is in `mcplex/testing`.
 */

export type {
  AgentDoneEvent,
  AgentEvent,
  AgentNoticeCode,
  AgentOutcome,
  AgentUsage,
} from "../../agent/agent-events.js";
export type { AgentRun } from "../../agent/agent-run.js";
export { ChatClient, type ChatClientOptions, type ChatRequestOptions } from "../../agent/chat-client.js";
export type {
  ChatCompletion,
  ChatCompletionChunk,
  ChatCompletionRequest,
  ChatMessage,
  ChatTool,
  ChatToolCall,
  ChatToolCallDelta,
  ChatUsage,
} from "../../agent/chat-types.js";
export {
  type ExecuteToolCallContext,
  executeToolCall,
  type ToolCallOutcome,
} from "../../agent/execute-tool-call.js";
export { type LlmFlags, type ResolvedLlmConfig, resolveLlmConfig } from "../../agent/llm-config.js";
export { LlmError, type LlmErrorFields, type LlmErrorKind } from "../../agent/llm-error.js";
export { type AgentLlm, type AgentTracer, type RunAgentOptions, runAgent } from "../../agent/run-agent.js";
export {
  resolveSchemaProfile,
  type SchemaProfile,
  sanitizeSchema,
  toChatTools,
} from "../../agent/schema-sanitizer.js";
export {
  type TextToolCallMode,
  type TextToolCallOutput,
  TextToolCallParser,
} from "../../agent/text-tool-call-parser.js";
export { type ParsedToolCall, ToolCallAccumulator } from "../../agent/tool-call-accumulator.js";
export type { AgentSkill, AgentTool, LoadedAgentSkill, ToolHost } from "../../agent/tool-host.js";
export { SEARCH_TOOLS_NAME } from "../../catalog/search-tools-tool.js";
