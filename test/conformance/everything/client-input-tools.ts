/**
 * The 2025-era sampling and elicitation tools, written once as input-required handlers: on a
 * 2026 request they answer `input_required`, on a 2025 connection the SDK's legacy shim sends the
 * embedded requests to the client as real `sampling/createMessage` / `elicitation/create` calls
 * and runs the handler again with the answers.
 */
import {
  type CallToolResult,
  type ElicitRequestFormParams,
  type InputRequiredResult,
  inputRequired,
  inputResponse,
  type McpServer,
} from "@modelcontextprotocol/server";
import * as z from "zod/v4";

type Schema = ElicitRequestFormParams["requestedSchema"];

function text(value: string): CallToolResult {
  return { content: [{ type: "text", text: value }] };
}

/** Elicits `schema` under `key` and, once answered, reports the action and content with `label`. */
function elicitOnce(
  responses: Record<string, unknown> | undefined,
  message: string,
  schema: Schema,
  label: string,
): CallToolResult | InputRequiredResult {
  const answer = inputResponse(responses, "form");
  if (answer.kind !== "elicit") {
    return inputRequired({
      inputRequests: { form: inputRequired.elicit({ message, requestedSchema: schema }) },
    });
  }
  return text(`${label}: action=${answer.action}, content=${JSON.stringify(answer.content ?? {})}`);
}

const SEP1034_DEFAULTS: Schema = {
  type: "object",
  properties: {
    name: { type: "string", description: "User name", default: "John Doe" },
    age: { type: "integer", description: "User age", default: 30 },
    score: { type: "number", description: "User score", default: 95.5 },
    status: {
      type: "string",
      description: "User status",
      enum: ["active", "inactive", "pending"],
      default: "active",
    },
    verified: { type: "boolean", description: "Verification status", default: true },
  },
  required: [],
};

const SEP1330_ENUMS: Schema = {
  type: "object",
  properties: {
    untitledSingle: { type: "string", description: "One of three", enum: ["option1", "option2", "option3"] },
    titledSingle: {
      type: "string",
      description: "One of three, with titles",
      oneOf: [
        { const: "value1", title: "First Option" },
        { const: "value2", title: "Second Option" },
        { const: "value3", title: "Third Option" },
      ],
    },
    legacyEnum: {
      type: "string",
      description: "One of three, titled the deprecated way",
      enum: ["opt1", "opt2", "opt3"],
      enumNames: ["Option One", "Option Two", "Option Three"],
    },
    untitledMulti: {
      type: "array",
      description: "Any of three",
      minItems: 1,
      maxItems: 3,
      items: { type: "string", enum: ["option1", "option2", "option3"] },
    },
    titledMulti: {
      type: "array",
      description: "Any of three, with titles",
      minItems: 1,
      maxItems: 3,
      items: {
        anyOf: [
          { const: "value1", title: "First Choice" },
          { const: "value2", title: "Second Choice" },
          { const: "value3", title: "Third Choice" },
        ],
      },
    },
  },
  required: [],
};

export function registerClientInputTools(server: McpServer): void {
  server.registerTool(
    "test_sampling",
    {
      description: "Asks the client's model to answer `prompt` (sampling, at most 100 tokens).",
      inputSchema: z.object({ prompt: z.string().describe("What to ask the model") }),
    },
    ({ prompt }, ctx): CallToolResult | InputRequiredResult => {
      const answer = inputResponse(ctx.mcpReq.inputResponses, "completion");
      if (answer.kind !== "sampling") {
        return inputRequired({
          inputRequests: {
            completion: inputRequired.createMessage({
              messages: [{ role: "user", content: { type: "text", text: prompt } }],
              maxTokens: 100,
            }),
          },
        });
      }
      const content = answer.result.content;
      const block = Array.isArray(content) ? content[0] : content;
      return text(`LLM response: ${block?.type === "text" ? block.text : JSON.stringify(content)}`);
    },
  );

  server.registerTool(
    "test_elicitation",
    {
      description: "Asks the user for a username and an email address (form elicitation).",
      inputSchema: z.object({ message: z.string().describe("What to tell the user") }),
    },
    ({ message }, ctx) =>
      elicitOnce(
        ctx.mcpReq.inputResponses,
        message,
        {
          type: "object",
          properties: {
            username: { type: "string", description: "Your user name" },
            email: { type: "string", format: "email", description: "Your email address" },
          },
          required: ["username", "email"],
        },
        "User response",
      ),
  );

  server.registerTool(
    "test_elicitation_sep1034_defaults",
    { description: "Elicits a form whose fields all carry defaults (SEP-1034).", inputSchema: z.object({}) },
    (_args, ctx) =>
      elicitOnce(
        ctx.mcpReq.inputResponses,
        "Review the fields; defaults are filled in",
        SEP1034_DEFAULTS,
        "Elicitation",
      ),
  );

  server.registerTool(
    "test_elicitation_sep1330_enums",
    { description: "Elicits a form with the five enum shapes (SEP-1330).", inputSchema: z.object({}) },
    (_args, ctx) =>
      elicitOnce(ctx.mcpReq.inputResponses, "Pick from the enum fields", SEP1330_ENUMS, "Elicitation"),
  );
}
