/**
 * The tools of the conformance "everything" server that need no input from the client: content
 * blocks of every kind, an error result, progress and logging, a reconnection, the header-mirroring
 * tool and the JSON Schema 2020-12 tool (the `server-stateless` list-change hooks are in
 * list-change-triggers.ts).
 */
import { setTimeout as sleep } from "node:timers/promises";
import {
  type CallToolResult,
  fromJsonSchema,
  type InputRequiredResult,
  inputRequired,
  type McpServer,
  type ServerContext,
} from "@modelcontextprotocol/server";
import { PNG_BASE64, WAV_BASE64 } from "./media.js";

function text(value: string): CallToolResult {
  return { content: [{ type: "text", text: value }] };
}

/**
 * The schema the `json-schema-2020-12` scenario expects to see unchanged in `tools/list`
 * (the spec's own example: `$schema`, `$defs` with `$anchor`, composition, conditionals).
 */
export const JSON_SCHEMA_2020_12_INPUT = {
  $schema: "https://json-schema.org/draft/2020-12/schema",
  type: "object",
  $defs: {
    address: {
      $anchor: "addressDef",
      type: "object",
      properties: { street: { type: "string" }, city: { type: "string" } },
    },
  },
  properties: {
    name: { type: "string" },
    address: { $ref: "#/$defs/address" },
    contactMethod: { type: "string", enum: ["phone", "email"] },
    phone: { type: "string" },
    email: { type: "string" },
  },
  allOf: [{ anyOf: [{ required: ["phone"] }, { required: ["email"] }] }],
  if: { properties: { contactMethod: { const: "phone" } }, required: ["contactMethod"] },
  // biome-ignore lint/suspicious/noThenProperty: `then` is a JSON Schema 2020-12 keyword.
  then: { required: ["phone"] },
  else: { required: ["email"] },
  additionalProperties: false,
} as const;

/** `x-mcp-header` is an MCP extension keyword, unknown to the JSON Schema typings. */
const X_MCP_HEADER_INPUT = {
  type: "object",
  properties: {
    region: { type: "string", description: "Mirrored into Mcp-Param-Region", "x-mcp-header": "Region" },
    count: { type: "integer", description: "Not mirrored" },
  },
} as const;

export function registerContentTools(server: McpServer): void {
  server.registerTool("test_simple_text", { description: "Returns one text block." }, () =>
    text("This is a simple text response for testing."),
  );

  server.registerTool("test_image_content", { description: "Returns one PNG image block." }, () => ({
    content: [{ type: "image", data: PNG_BASE64, mimeType: "image/png" }],
  }));

  server.registerTool("test_audio_content", { description: "Returns one WAV audio block." }, () => ({
    content: [{ type: "audio", data: WAV_BASE64, mimeType: "audio/wav" }],
  }));

  server.registerTool(
    "test_embedded_resource",
    { description: "Returns one embedded text resource." },
    () => ({
      content: [
        {
          type: "resource",
          resource: {
            uri: "test://embedded-resource",
            mimeType: "text/plain",
            text: "This is an embedded resource content.",
          },
        },
      ],
    }),
  );

  server.registerTool(
    "test_multiple_content_types",
    { description: "Returns a text, an image and an embedded JSON resource." },
    () => ({
      content: [
        { type: "text", text: "Multiple content types test:" },
        { type: "image", data: PNG_BASE64, mimeType: "image/png" },
        {
          type: "resource",
          resource: {
            uri: "test://mixed-content-resource",
            mimeType: "application/json",
            text: JSON.stringify({ test: "data", value: 123 }),
          },
        },
      ],
    }),
  );

  server.registerTool("test_error_handling", { description: "Always answers with a tool error." }, () => ({
    isError: true,
    content: [{ type: "text", text: "This tool intentionally returns an error for testing" }],
  }));

  server.registerTool(
    "test_tool_with_progress",
    { description: "Reports progress 0, 50 and 100 of 100 when the call carries a progress token." },
    async (ctx: ServerContext) => {
      const progressToken = ctx.mcpReq._meta?.progressToken;
      if (progressToken === undefined) return text("no progress token");
      for (const progress of [0, 50, 100]) {
        await ctx.mcpReq.notify({
          method: "notifications/progress",
          params: { progressToken, progress, total: 100, message: `step ${progress / 50 + 1} of 3` },
        });
        if (progress < 100) await sleep(50, undefined, { signal: ctx.mcpReq.signal });
      }
      return text(`progress reported for token ${String(progressToken)}`);
    },
  );

  server.registerTool(
    "test_tool_with_logging",
    { description: "Logs three info messages while it runs (2025: subject to logging/setLevel)." },
    async (ctx: ServerContext) => {
      const steps = ["Tool execution started", "Tool processing data", "Tool execution completed"];
      for (const [i, step] of steps.entries()) {
        await ctx.mcpReq.log("info", step, "everything-server");
        if (i < steps.length - 1) await sleep(50, undefined, { signal: ctx.mcpReq.signal });
      }
      return text("logged three messages");
    },
  );

  // The (pending) `server-sse-polling` scenario calls it: over HTTP with an event store it would
  // close the call's SSE stream for the client to resume; elsewhere it only takes a moment.
  server.registerTool(
    "test_reconnection",
    { description: "Closes the call's SSE stream where it can, then answers after a moment." },
    async (ctx: ServerContext) => {
      ctx.http?.closeSSE?.();
      await sleep(100, undefined, { signal: ctx.mcpReq.signal });
      return text("Reconnection test completed");
    },
  );

  // The `server-stateless` diagnostics (2026): each one exercises one rule of the stateless era.
  server.registerTool(
    "test_logging_tool",
    {
      description:
        "Logs through the request-scoped channel, which stays silent unless _meta asks for a logLevel.",
    },
    async (ctx: ServerContext) => {
      await ctx.mcpReq.log("info", "test_logging_tool ran", "everything-server");
      return text("logged once, if the request asked for a log level");
    },
  );

  server.registerTool(
    "test_streaming_elicitation",
    { description: "Answers with a plain result: a response stream never carries requests of its own." },
    () => text("result only; no server-to-client request on this stream"),
  );

  server.registerTool(
    "test_missing_capability",
    { description: "Needs the client's sampling capability (one in-band sampling request)." },
    (ctx: ServerContext): CallToolResult | InputRequiredResult => {
      if (ctx.mcpReq.inputResponses?.answer !== undefined) return text("sampling answered");
      return inputRequired({
        inputRequests: {
          answer: inputRequired.createMessage({
            messages: [{ role: "user", content: { type: "text", text: "Say pong." } }],
            maxTokens: 16,
          }),
        },
      });
    },
  );

  // Arms the (pending) `http-custom-header-server-validation` scenario: an argument the client
  // mirrors into `Mcp-Param-Region`, which the SDK checks against the body.
  server.registerTool(
    "test_x_mcp_header",
    {
      description: "Echoes `region`, which HTTP clients also send as the Mcp-Param-Region header.",
      inputSchema: fromJsonSchema<{ region?: string; count?: number }>(X_MCP_HEADER_INPUT),
    },
    ({ region }) => text(`region=${region ?? "(none)"}`),
  );

  server.registerTool(
    "json_schema_2020_12_tool",
    {
      description: "Carries a JSON Schema 2020-12 input schema that must be listed verbatim.",
      inputSchema: fromJsonSchema<Record<string, unknown>>(JSON_SCHEMA_2020_12_INPUT),
    },
    (args) => text(`json_schema_2020_12_tool called with ${JSON.stringify(args)}`),
  );
}
