/**
 * Test helpers around the mock chat-completions server and agent runs.
 */
import type { AgentEvent } from "../../src/agent/agent-events.js";
import type { AgentRun } from "../../src/agent/agent-run.js";
import {
  type MockLlmServer,
  type MockLlmServerOptions,
  startMockLlmServer,
} from "../../src/testing/mock-llm-server.js";

export { mockErrors } from "../../src/testing/mock-llm-chunks.js";
export type { MockTurn } from "../../src/testing/mock-llm-server.js";

/** Starts a mock and returns it with an `llm` config pointing at it. */
export async function startMockLlm(
  options: MockLlmServerOptions = {},
): Promise<MockLlmServer & { llm: { baseUrl: string; model: string } }> {
  const server = await startMockLlmServer(options);
  return Object.assign(server, { llm: { baseUrl: server.url, model: "mock-model" } });
}

/** Reads a whole run into its events. */
export async function collect(run: AgentRun): Promise<AgentEvent[]> {
  const events: AgentEvent[] = [];
  for await (const event of run) events.push(event);
  return events;
}

/** Reads a run's text stream into one string. */
export async function collectText(run: AgentRun): Promise<string> {
  let text = "";
  for await (const piece of run.textStream) text += piece;
  return text;
}

/** Events of one type. */
export function ofType<T extends AgentEvent["type"]>(
  events: AgentEvent[],
  type: T,
): Array<Extract<AgentEvent, { type: T }>> {
  return events.filter((e): e is Extract<AgentEvent, { type: T }> => e.type === type);
}

/** The last tool messages' contents of a recorded request, by tool_call_id. */
export function toolMessages(body: {
  messages: unknown[];
}): Array<{ tool_call_id: string; content: string }> {
  return body.messages.filter((m): m is { role: "tool"; tool_call_id: string; content: string } => {
    return (m as { role: string }).role === "tool";
  });
}
