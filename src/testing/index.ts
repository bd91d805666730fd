/**
 * Test support for code built on mcplex: a local OpenAI-compatible chat-completions server
 * over real HTTP with scripted turns, provider quirks and provider error bodies, to run
 * `runAgent` or a `ChatClient` without a model.
 *
 * @example
 * const llm = await startMockLlmServer({ turns: [{ text: "hello" }] });
 * const run = runAgent({ hub, llm: { baseUrl: llm.url, model: "mock" }, messages });
 * await llm.close();
 */

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
