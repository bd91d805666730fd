/**
 * The multi-round-trip (`input_required`) tools and prompt of the conformance "everything"
 * server. Every round is stateless: what a later round needs travels in `requestState`, sealed by
 * the SDK's HMAC codec and verified by the server seam before a handler runs (a tampered state
 * never reaches a handler; the seam answers -32602).
 */
import { randomUUID } from "node:crypto";
import {
  acceptedContent,
  type CallToolResult,
  CLIENT_CAPABILITIES_META_KEY,
  type ClientCapabilities,
  createRequestStateCodec,
  type GetPromptResult,
  type InputRequests,
  type InputRequiredResult,
  inputRequired,
  inputResponse,
  type McpServer,
  type RequestStateCodec,
  type ServerContext,
} from "@modelcontextprotocol/server";

/** What the fixture keeps in `requestState`: which tool minted it, the round, and what was learned. */
export interface RoundState {
  tool: string;
  round: number;
  nonce: string;
  name?: string;
}

/**
 * One codec per process: the 2026 HTTP path builds a server per request, so the key must outlive
 * any one instance. A random key means state minted by one process is refused by another.
 */
export const requestStateCodec: RequestStateCodec<RoundState> = createRequestStateCodec<RoundState>({
  key: crypto.getRandomValues(new Uint8Array(32)),
  ttlSeconds: 300,
});

type ToolResult = CallToolResult | InputRequiredResult;

function text(value: string): CallToolResult {
  return { content: [{ type: "text", text: value }] };
}

function askName(message = "What is your name?") {
  return inputRequired.elicit({
    message,
    requestedSchema: { type: "object", properties: { name: { type: "string" } }, required: ["name"] },
  });
}

function askConfirm() {
  return inputRequired.elicit({
    message: "Please confirm",
    requestedSchema: { type: "object", properties: { ok: { type: "boolean" } }, required: ["ok"] },
  });
}

function mint(tool: string, round: number, extra: Partial<RoundState> = {}): Promise<string> {
  return requestStateCodec.mint({ tool, round, nonce: randomUUID(), ...extra });
}

/** The verified state of this round, when it was minted by `tool`. */
function stateOf(ctx: ServerContext, tool: string): RoundState | undefined {
  const state = ctx.mcpReq.requestState<RoundState>();
  return state?.tool === tool ? state : undefined;
}

function samplingText(responses: Record<string, unknown> | undefined, key: string): string | undefined {
  const answer = inputResponse(responses, key);
  if (answer.kind !== "sampling") return undefined;
  const content = answer.result.content;
  const block = Array.isArray(content) ? content[0] : content;
  return block?.type === "text" ? block.text : undefined;
}

function rootUris(responses: Record<string, unknown> | undefined, key: string): string[] | undefined {
  const answer = inputResponse(responses, key);
  return answer.kind === "roots" ? answer.roots.map((root) => root.uri) : undefined;
}

export function registerInputRequiredTools(server: McpServer): void {
  server.registerTool(
    "test_input_required_result_elicitation",
    { description: "Asks for the caller's name (key user_name), then greets them." },
    (ctx: ServerContext): ToolResult => {
      const name = acceptedContent<{ name: string }>(ctx.mcpReq.inputResponses, "user_name")?.name;
      if (typeof name !== "string") return inputRequired({ inputRequests: { user_name: askName() } });
      return text(`Hello, ${name}!`);
    },
  );

  server.registerTool(
    "test_input_required_result_sampling",
    { description: "Asks the client's model a question (key capital_question), then repeats the answer." },
    (ctx: ServerContext): ToolResult => {
      const answer = samplingText(ctx.mcpReq.inputResponses, "capital_question");
      if (answer === undefined) {
        return inputRequired({
          inputRequests: {
            capital_question: inputRequired.createMessage({
              messages: [{ role: "user", content: { type: "text", text: "What is the capital of France?" } }],
              maxTokens: 100,
            }),
          },
        });
      }
      return text(`Sampling response: ${answer}`);
    },
  );

  server.registerTool(
    "test_input_required_result_list_roots",
    { description: "Asks for the client's roots (key client_roots), then lists them." },
    (ctx: ServerContext): ToolResult => {
      const uris = rootUris(ctx.mcpReq.inputResponses, "client_roots");
      if (uris === undefined)
        return inputRequired({ inputRequests: { client_roots: inputRequired.listRoots() } });
      return text(`Client roots (${uris.length}): ${uris.join(", ")}`);
    },
  );

  server.registerTool(
    "test_input_required_result_request_state",
    { description: "Asks for a confirmation (key confirm) and carries sealed requestState to the retry." },
    async (ctx: ServerContext): Promise<ToolResult> => {
      const confirmed = acceptedContent(ctx.mcpReq.inputResponses, "confirm");
      const state = stateOf(ctx, "request_state");
      if (confirmed === undefined || state === undefined) {
        return inputRequired({
          inputRequests: { confirm: askConfirm() },
          requestState: await mint("request_state", 1),
        });
      }
      return text(`state-ok: round ${state.round} state verified, confirmation ${JSON.stringify(confirmed)}`);
    },
  );

  server.registerTool(
    "test_input_required_result_multiple_inputs",
    { description: "Asks for a name, a sampled greeting and the roots in one round." },
    async (ctx: ServerContext): Promise<ToolResult> => {
      const responses = ctx.mcpReq.inputResponses;
      const name = acceptedContent<{ name: string }>(responses, "user_name")?.name;
      const greeting = samplingText(responses, "greeting");
      const uris = rootUris(responses, "client_roots");
      if (typeof name !== "string" || greeting === undefined || uris === undefined) {
        return inputRequired({
          inputRequests: {
            user_name: askName(),
            greeting: inputRequired.createMessage({
              messages: [{ role: "user", content: { type: "text", text: "Generate a greeting" } }],
              maxTokens: 50,
            }),
            client_roots: inputRequired.listRoots(),
          },
          requestState: await mint("multiple_inputs", 1),
        });
      }
      return text(`${greeting} ${name} (${uris.length} roots)`);
    },
  );

  server.registerTool(
    "test_input_required_result_multi_round",
    { description: "Two elicitation rounds (step1: name, step2: colour), new requestState each round." },
    async (ctx: ServerContext): Promise<ToolResult> => {
      const state = stateOf(ctx, "multi_round");
      const name = acceptedContent<{ name: string }>(ctx.mcpReq.inputResponses, "step1")?.name;
      const color = acceptedContent<{ color: string }>(ctx.mcpReq.inputResponses, "step2")?.color;
      if (state?.round === 2 && typeof color === "string") {
        return text(`Multi-round complete: ${state.name ?? "someone"} likes ${color}`);
      }
      if (state?.round === 1 && typeof name === "string") {
        return inputRequired({
          inputRequests: {
            step2: inputRequired.elicit({
              message: "Step 2: What is your favourite colour?",
              requestedSchema: {
                type: "object",
                properties: { color: { type: "string" } },
                required: ["color"],
              },
            }),
          },
          requestState: await mint("multi_round", 2, { name }),
        });
      }
      return inputRequired({
        inputRequests: { step1: askName("Step 1: What is your name?") },
        requestState: await mint("multi_round", 1),
      });
    },
  );

  server.registerTool(
    "test_input_required_result_tampered_state",
    { description: "Carries sealed requestState; a modified state is refused before this handler runs." },
    async (ctx: ServerContext): Promise<ToolResult> => {
      if (
        stateOf(ctx, "tampered_state") !== undefined &&
        acceptedContent(ctx.mcpReq.inputResponses, "confirm")
      ) {
        return text("integrity-ok: requestState verified");
      }
      return inputRequired({
        inputRequests: { confirm: askConfirm() },
        requestState: await mint("tampered_state", 1),
      });
    },
  );

  server.registerTool(
    "test_input_required_result_capabilities",
    { description: "Asks only for the kinds of input the request's client capabilities cover." },
    (ctx: ServerContext): ToolResult => {
      if (ctx.mcpReq.inputResponses !== undefined) return text("declared inputs received");
      // 2026: the request's own envelope; 2025: what the client declared at initialize. The
      // published typings declare the envelope as `{}`, hence the widening.
      const envelope = ctx.mcpReq.envelope as Record<string, unknown> | undefined;
      const declared = (envelope?.[CLIENT_CAPABILITIES_META_KEY] ??
        server.server.getClientCapabilities() ??
        {}) as ClientCapabilities;
      const inputRequests: InputRequests = {};
      if (declared.elicitation !== undefined) inputRequests.user_name = askName();
      if (declared.sampling !== undefined) {
        inputRequests.greeting = inputRequired.createMessage({
          messages: [{ role: "user", content: { type: "text", text: "Generate a short greeting" } }],
          maxTokens: 50,
        });
      }
      if (declared.roots !== undefined) inputRequests.client_roots = inputRequired.listRoots();
      if (Object.keys(inputRequests).length === 0) return text("the client declared no input capability");
      return inputRequired({ inputRequests });
    },
  );

  server.registerPrompt(
    "test_input_required_result_prompt",
    { title: "Input-required prompt", description: "Asks for context (key user_context) before rendering." },
    (ctx: ServerContext): GetPromptResult | InputRequiredResult => {
      const context = acceptedContent<{ context: string }>(
        ctx.mcpReq.inputResponses,
        "user_context",
      )?.context;
      if (typeof context !== "string") {
        return inputRequired({
          inputRequests: {
            user_context: inputRequired.elicit({
              message: "What context should the prompt use?",
              requestedSchema: {
                type: "object",
                properties: { context: { type: "string" } },
                required: ["context"],
              },
            }),
          },
        });
      }
      return {
        messages: [{ role: "user", content: { type: "text", text: `Use this context: ${context}` } }],
      };
    },
  );
}
