import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse } from "yaml";
import { SecretStore } from "../../src/config/index.js";
import { type CardHost, startCardHost } from "../support/card-server.js";
import { runCli } from "../support/cli.js";
import { configOf, fixture } from "../support/config.js";
import { type InProcessGateway, startGateway } from "../support/gateway.js";

/**
 * `mcplex add` of a Server Card's URL or a domain (the MCP draft SEP-2127), against a real
 * gateway's own card and against a test host serving cards and catalogs on loopback. The
 * written files go through the built CLI's `config check`.
 */

const SECRET_KEY = "cards-test-passphrase";
const SCHEMA = "https://static.modelcontextprotocol.io/schemas/v1/server-card.schema.json";

let dir: string;
let home: string;
let gw: InProcessGateway;
let host: CardHost;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "mcplex-card-add-"));
  home = join(dir, "home");
  gw = await startGateway(configOf([fixture("fx")]), { tokens: [{ token: "card-test-token-0123456789" }] });
  host = await startCardHost();
});
afterAll(async () => {
  await gw?.stop();
  await host?.close();
  await rm(dir, { recursive: true, force: true });
});

function mcplex(args: string[]) {
  return runCli(args, { env: { MCPLEX_HOME: home, MCPLEX_SECRET_KEY: SECRET_KEY } });
}

async function entries(file: string): Promise<Record<string, Record<string, unknown>>> {
  return (parse(await readFile(file, "utf8")) as { servers: Record<string, Record<string, unknown>> })
    .servers;
}

async function configCheck(file: string): Promise<void> {
  const check = await mcplex(["config", "check", "--config", file, "--json"]);
  expect(check.stdout + check.stderr).toContain('"ok":true');
  expect(check.code).toBe(0);
}

describe("mcplex add DOMAIN", () => {
  it("adds a gateway from its own AI Catalog, its token to the secret store", async () => {
    const file = join(dir, "gateway.yaml");
    const domain = gw.origin.replace(/^http:\/\//, "");
    const result = await mcplex([
      "add",
      domain,
      "--config",
      file,
      "--env",
      "token=card-test-token-0123456789",
    ]);
    expect(result.code, result.stderr).toBe(0);
    const servers = await entries(file);
    expect(servers.mcplex).toEqual({
      url: gw.url,
      headers: { Authorization: "Bearer ${secret:mcplex.token}" },
    });
    expect(await readFile(file, "utf8")).toContain(`from the Server Card ${gw.origin}/mcp/server-card`);
    const store = new SecretStore({ env: { MCPLEX_HOME: home, MCPLEX_SECRET_KEY: SECRET_KEY } });
    expect(await store.get("mcplex.token")).toBe("card-test-token-0123456789");
    await configCheck(file);
  });

  it("adds every card of a catalog on its origin, inline ones too", async () => {
    const card = (name: string, path: string) => ({
      $schema: SCHEMA,
      name: `com.example/${name}`,
      version: "1.0.0",
      description: `The ${name} server`,
      remotes: [{ type: "streamable-http", url: `https://${name}.example.com${path}` }],
    });
    host.route("/.well-known/ai-catalog.json", {
      body: {
        specVersion: "1.0",
        entries: [
          {
            identifier: "urn:air:example.com:mcp:a",
            type: "application/mcp-server-card+json",
            url: "/a/server-card",
          },
          {
            identifier: "urn:air:example.com:mcp:b",
            type: "application/mcp-server-card+json",
            data: card("b", "/mcp"),
          },
          {
            identifier: "urn:air:example.com:agent:x",
            type: "application/a2a-agent-card+json",
            url: "/agent",
          },
        ],
      },
    });
    host.route("/a/server-card", { body: card("a", "/mcp") });
    const file = join(dir, "catalog.yaml");
    const result = await mcplex(["add", `127.0.0.1:${host.port}`, "--config", file]);
    expect(result.code, result.stderr).toBe(0);
    expect(await entries(file)).toEqual({
      a: { url: "https://a.example.com/mcp" },
      b: { url: "https://b.example.com/mcp" },
    });
    // The agent card is not an MCP server's: never fetched.
    expect(host.requests).not.toContain("/agent");
    await configCheck(file);
  });
});

describe("mcplex add CARD-URL", () => {
  it("adds an SSE remote with its URL variables asked for", async () => {
    host.route("/tenant/server-card", {
      body: {
        $schema: SCHEMA,
        name: "com.example/tenant",
        version: "2.0.0",
        description: "Per tenant",
        remotes: [
          {
            type: "sse",
            url: "https://{tenant}.example.com/sse",
            variables: { tenant: { description: "your tenant", isRequired: true } },
          },
        ],
      },
    });
    const file = join(dir, "tenant.yaml");
    const missing = await mcplex(["add", `${host.origin}/tenant/server-card`, "--config", file]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/needs tenant/);
    const result = await mcplex([
      "add",
      `${host.origin}/tenant/server-card`,
      "--config",
      file,
      "--env",
      "tenant=acme",
    ]);
    expect(result.code, result.stderr).toBe(0);
    expect((await entries(file)).tenant).toEqual({ url: "https://acme.example.com/sse", transport: "sse" });
    await configCheck(file);
  });
});
