/**
 * What `runAgent` reports, as a discriminated union on `type`. A speech consumer reads
 * only `text-delta`: tool syntax never appears there.
 */
import type { CallToolResult } from "@modelcontextprotocol/client";
import type { ChatMessage, ChatUsage } from "./chat-types.js";

/** How a run ended. */
export type AgentOutcome =
  /** The model answered without asking for tools. */
  | "stop"
  /** `maxSteps` was reached while the model still wanted tools. */
  | "max-steps"
  /** The caller's signal aborted the run. */
  | "aborted"
  /** The model ran out of output tokens. */
  | "length"
  /** An error ended the run (see the `error` event before `done`). */
  | "error";

/** Something the loop decided on its own and wants the user to know. */
export type AgentNoticeCode =
  /** The provider rejected a request parameter; it was dropped and the request retried. */
  | "param-dropped"
  /** The provider rejected `tools`; the run continues as plain chat. */
  | "tools-unsupported"
  /** More tools than the provider accepts; the loop narrowed to search-then-call. */
  | "too-many-tools";

/** Token counts summed over a run. */
export interface AgentUsage {
  promptTokens: number;
  completionTokens: number;
  totalTokens: number;
}

/** Every event of a run. */
export type AgentEvent =
  | { type: "step-start"; step: number }
  | { type: "text-delta"; step: number; text: string }
  | {
      type: "tool-call";
      step: number;
      toolCallId: string;
      toolName: string;
      /** The parsed arguments, or undefined when they were not a JSON object. */
      input: Record<string, unknown> | undefined;
      /** The arguments as the model wrote them. */
      rawArguments: string;
      /** `native` for `tool_calls`, `text` for calls the model wrote into its text. */
      source: "native" | "text";
    }
  | {
      type: "tool-result";
      step: number;
      toolCallId: string;
      toolName: string;
      isError: boolean;
      /** The text sent back to the model. */
      output: string;
      /** The MCP result, when the tool ran. */
      result?: CallToolResult;
    }
  | {
      type: "step-end";
      step: number;
      finishReason: string | undefined;
      /** As the provider reported it for this step, if it did. */
      usage: ChatUsage | undefined;
      toolCalls: number;
    }
  | { type: "retry"; step: number; attempt: number; delayMs: number; error: Error }
  | { type: "notice"; code: AgentNoticeCode; message: string; param?: string }
  | { type: "error"; step: number; error: Error; fatal: boolean }
  | {
      type: "done";
      outcome: AgentOutcome;
      steps: number;
      usage: AgentUsage;
      /** The whole conversation: the input messages and everything the run added. */
      messages: ChatMessage[];
      /** The final answer text of the last step. */
      text: string;
      error?: Error;
    };

/** The `done` event. */
export type AgentDoneEvent = Extract<AgentEvent, { type: "done" }>;
