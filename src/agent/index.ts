/**
 * The agent loop: an OpenAI-compatible chat client, tool-call assembly with provider
 * quirks, schema sanitising, and `runAgent` with its event stream.
 */
export type {
  AgentDoneEvent,
  AgentEvent,
  AgentNoticeCode,
  AgentOutcome,
  AgentUsage,
} from "./agent-events.js";
export type { AgentRun } from "./agent-run.js";
export {
  ChatClient,
  type ChatClientOptions,
  type ChatRequestOptions,
  completionToChunks,
} from "./chat-client.js";
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
export { extractProviderError, LlmError, type LlmErrorFields, type LlmErrorKind } from "./llm-error.js";
export {
  type MockQuirk,
  type MockReply,
  type MockToolCall,
  mockErrors,
  toolCallsAsText,
} from "./mock-llm-chunks.js";
export {
  type MockLlmServer,
  type MockLlmServerOptions,
  type MockTurn,
  type MockWireOptions,
  type RecordedRequest,
  startMockLlmServer,
} from "./mock-llm-server.js";
export { DROPPABLE_PARAMS, detectRejectedParam } from "./rejected-param.js";
export { type AgentLlm, type RunAgentOptions, runAgent } from "./run-agent.js";
export { resolveSchemaProfile, type SchemaProfile, sanitizeSchema, toChatTools } from "./schema-sanitizer.js";
export {
  type TextToolCallMode,
  type TextToolCallOutput,
  TextToolCallParser,
} from "./text-tool-call-parser.js";
export {
  finishCall,
  mintToolCallId,
  type ParsedToolCall,
  ToolCallAccumulator,
} from "./tool-call-accumulator.js";
export type { AgentTool, ToolHost } from "./tool-host.js";
export { toolResultText } from "./tool-result-text.js";
export { SEARCH_TOOLS_NAME, searchTools, searchToolsTool } from "./tool-search.js";
