/**
 * Client under test for the official MCP conformance suite
 * (`@modelcontextprotocol/conformance client --command ...`).
 *
 * The runner starts a mock server per scenario and runs this script with the
 * server URL as the last argument, the scenario name in
 * `MCP_CONFORMANCE_SCENARIO`, the revision in `MCP_CONFORMANCE_PROTOCOL_VERSION`
 * and, for some scenarios, data in `MCP_CONFORMANCE_CONTEXT`. Everything goes
 * through the {@link Hub}: this script only says what to call.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { McplexConfig, OAuthConfig } from "../../src/config/types.js";
import { McplexError } from "../../src/errors.js";
import { Hub } from "../../src/hub/hub.js";
import type { ServerRequest } from "../../src/protocol/server-requests.js";
import { memoryOAuthStore } from "../../src/upstream/oauth.js";
import { approveAtOnce } from "../support/approve.js";

type Scenario = (hub: Hub) => Promise<void>;

/**
 * Printed when a scenario ran to the end. The runner keeps each client's stdout, and
 * a client that crashed can still leave only passing checks behind, so the test looks for it.
 */
const DONE_MARKER = "mcplex-conformance-client: done";

const scenarios: Record<string, Scenario> = {
  // Connecting is the test: the handshake (2025) or discover probe (2026) and the first listings.
  initialize: async () => {},
  "request-metadata": async () => {},
  "json-schema-ref-no-deref": async () => {},

  tools_call: async (hub) => {
    await hub.callTool("add_numbers", { a: 2, b: 3 });
  },

  "elicitation-sep1034-client-defaults": async (hub) => {
    await hub.callTool("test_client_elicitation_defaults", {});
  },

  "sse-retry": async (hub) => {
    await hub.callTool("test_reconnection", {});
  },

  "http-standard-headers": async (hub) => {
    for (const tool of hub.tools()) await hub.callTool(tool.name, {});
    for (const resource of hub.resources()) await hub.readResource(resource.uri);
    for (const prompt of hub.prompts()) await hub.getPrompt(prompt.name, {});
  },

  "http-custom-headers": async (hub) => {
    for (const call of context().toolCalls ?? []) await hub.callTool(call.name, call.arguments);
  },

  "http-invalid-tool-headers": async (hub) => {
    // Tools with invalid x-mcp-header annotations never reach the catalog; call whatever is left.
    for (const tool of hub.tools()) await hub.callTool(tool.name, {});
  },

  "sep-2322-client-request-state": async (hub) => {
    let unrelatedDone = false;
    const onServerRequest = async (request: ServerRequest) => {
      // Another call while this one waits for input: it must not carry this call's MRTR state.
      if (!unrelatedDone) {
        unrelatedDone = true;
        await hub.callTool("test_mrtr_unrelated", {});
      }
      return answerServerRequest(request);
    };
    await hub.callTool("test_mrtr_echo_state", {}, { onServerRequest });
    await hub.callTool("test_mrtr_no_state", {});
    await hub.callTool("test_mrtr_no_result_type", {});
  },

  // Skills (SEP-2640): the hub lists skills and reads no file until a skill is loaded.
  "sep-2640-client-no-prefetch": async (hub) => {
    await hub.skills();
  },
  // The served SKILL.md does not match its entry (digest, size or frontmatter): loading it must
  // fail, and the supporting file must never be read.
  "sep-2640-client-verify-digest": loadTamperedSkill,
  "sep-2640-client-verify-size": loadTamperedSkill,
  "sep-2640-client-verify-frontmatter": loadTamperedSkill,

  "json-schema-2020-12-preservation": async (hub) => {
    const tool = hub.tools().find((t) => t.originalName === "json_schema_2020_12_tool");
    if (tool === undefined) throw new Error("json_schema_2020_12_tool is not listed");
    await hub.callTool("json_schema_echo", { schema: tool.inputSchema });
  },
};

/** Loads the scenario's one skill and reads a supporting file; a refused load ends the scenario. */
async function loadTamperedSkill(hub: Hub): Promise<void> {
  const [skill] = await hub.skills();
  if (skill === undefined) throw new Error("the server lists no skill");
  try {
    const loaded = await hub.loadSkill(skill);
    await hub.readSkillFile(loaded, "references/FORMS.md");
  } catch (error) {
    if (!(error instanceof McplexError) || error.code !== "SKILL_VERIFICATION_FAILED") throw error;
    console.log(`refused: ${error.message}`);
    return;
  }
  throw new Error(`${skill.uri} was loaded although it does not match its entry`);
}

interface Context {
  toolCalls?: Array<{ name: string; arguments: Record<string, unknown> }>;
  /** A pre-registered client (auth/pre-registration). */
  client_id?: string;
  client_secret?: string;
  /** A client that signs its assertions (auth/client-credentials-jwt). */
  private_key_pem?: string;
  signing_algorithm?: string;
  /** The workload's JWT (auth/wif-jwt-bearer). */
  valid_jwt?: string;
  /** The identity provider and the user's ID token (auth/enterprise-managed-authorization). */
  idp_client_id?: string;
  idp_id_token?: string;
  idp_token_endpoint?: string;
}

function context(): Context {
  const raw = process.env.MCP_CONFORMANCE_CONTEXT;
  return raw === undefined ? {} : (JSON.parse(raw) as Context);
}

/** Answers elicitation by accepting with the schema's defaults (and `true` for yes/no questions). */
async function answerServerRequest(request: ServerRequest): Promise<Record<string, unknown>> {
  switch (request.method) {
    case "elicitation/create": {
      const schema = request.params.requestedSchema as
        | { properties?: Record<string, { type?: string; default?: unknown }> }
        | undefined;
      const content: Record<string, unknown> = {};
      for (const [key, property] of Object.entries(schema?.properties ?? {})) {
        if (property.default !== undefined) content[key] = property.default;
        else if (property.type === "boolean") content[key] = true;
      }
      return { action: "accept", content };
    }
    case "roots/list":
      return { roots: [] };
    case "sampling/createMessage":
      return {
        role: "assistant",
        content: { type: "text", text: "conformance" },
        model: "mcplex-conformance",
        stopReason: "endTurn",
      };
    default:
      throw new Error(`unexpected server request ${request.method}`);
  }
}

/**
 * Auth scenarios: connecting (discovery, registration, PKCE, token exchange, and any
 * step-up on the way) is the test; then the tools are listed and called with the token.
 */
const authorized: Scenario = async (hub) => {
  for (const tool of hub.tools()) await hub.callTool(tool.name, {});
};

/**
 * Where the scenario's tokens are written for the config to read them, as a workload's
 * platform would project them: the hub reads the file, never the context.
 */
const tokenDir = mkdtempSync(join(tmpdir(), "mcplex-conformance-tokens-"));

function tokenFile(name: string, token: string): { file: string } {
  const file = join(tokenDir, name);
  writeFileSync(file, `${token}\n`, { mode: 0o600 });
  return { file };
}

/** The client mcplex presents to the scenario's authorization server. */
function oauthConfig(scenario: string): OAuthConfig {
  const ctx = context();
  const base: OAuthConfig = {
    grant: scenario.startsWith("auth/client-credentials") ? "client_credentials" : "authorization_code",
    redirectUrl: "http://localhost:3000/callback",
    clientName: "mcplex-conformance",
    // The suite's authorization server knows this metadata document's URL.
    clientMetadataUrl: "https://conformance-test.local/client-metadata.json",
    ...(scenario.startsWith("auth/dpop") ? { dpop: true } : {}),
  };
  const { clientMetadataUrl: _unused, ...named } = base;
  if (ctx.valid_jwt !== undefined) {
    // Workload identity federation: the platform's JWT, read from its file.
    return {
      ...named,
      grant: "jwt-bearer",
      ...(ctx.client_id === undefined ? {} : { clientId: ctx.client_id }),
      assertion: tokenFile("workload.jwt", ctx.valid_jwt),
    };
  }
  if (
    ctx.idp_id_token !== undefined &&
    ctx.idp_token_endpoint !== undefined &&
    ctx.idp_client_id !== undefined
  ) {
    // Enterprise-managed authorization: the user's ID token, read from its file.
    return {
      ...named,
      grant: "id-jag",
      clientId: ctx.client_id ?? "",
      ...(ctx.client_secret === undefined ? {} : { clientSecret: ctx.client_secret }),
      idJag: {
        tokenEndpoint: ctx.idp_token_endpoint,
        clientId: ctx.idp_client_id,
        idToken: tokenFile("id-token.jwt", ctx.idp_id_token),
      },
    };
  }
  if (ctx.client_id === undefined) return base;
  const { clientMetadataUrl: _, ...registered } = base;
  return {
    ...registered,
    clientId: ctx.client_id,
    ...(ctx.client_secret === undefined ? {} : { clientSecret: ctx.client_secret }),
    ...(ctx.private_key_pem === undefined ? {} : { privateKey: ctx.private_key_pem }),
    ...(ctx.signing_algorithm === undefined ? {} : { signingAlgorithm: ctx.signing_algorithm }),
  };
}

async function main(): Promise<void> {
  const name = process.env.MCP_CONFORMANCE_SCENARIO ?? "";
  const version = process.env.MCP_CONFORMANCE_PROTOCOL_VERSION ?? "2025-11-25";
  const url = process.argv.at(-1);
  const auth = name.startsWith("auth/");
  const scenario = auth ? authorized : scenarios[name];
  if (scenario === undefined) throw new Error(`scenario "${name}" is not supported`);
  if (url === undefined || !/^https?:\/\//.test(url)) throw new Error("usage: client.ts <server-url>");

  const config: McplexConfig = {
    source: "conformance",
    format: "mcplex",
    profiles: {},
    tokens: [],
    secrets: [],
    servers: [
      {
        name: "conformance",
        transport: "streamable-http",
        url,
        headers: {},
        enabled: true,
        // Below the runner's 60 s per client: with the whole suite's fifty clients starting at
        // once on two cores, a start can take tens of seconds.
        timeout: 45_000,
        startTimeout: 45_000,
        lazy: false,
        prefix: "",
        tools: {},
        // Pinned: 2025 revisions get the initialize handshake, 2026-07-28 the stateless protocol.
        protocolVersion: version,
        ...(auth ? { oauth: oauthConfig(name) } : {}),
      },
    ],
  };
  const hub = new Hub({
    config,
    onServerRequest: answerServerRequest,
    oauth: { store: memoryOAuthStore(), authorize: approveAtOnce },
  });
  try {
    await hub.start();
    const [status] = hub.servers();
    if (status?.state !== "ready") throw new Error(`server did not start: ${status?.error ?? status?.state}`);
    await scenario(hub);
    console.log(`${DONE_MARKER} ${name}`);
  } finally {
    await hub.close();
    rmSync(tokenDir, { recursive: true, force: true });
  }
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error instanceof Error ? (error.stack ?? error.message) : error);
    process.exit(1);
  },
);
