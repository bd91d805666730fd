import { mkdtemp, rename, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { parseConfig } from "../../src/config/parse-config.js";
import type { OAuthConfig, RemoteServerConfig } from "../../src/config/types.js";
import { McplexError } from "../../src/errors.js";
import { Hub } from "../../src/hub/hub.js";
import { authorizeServer, memoryOAuthStore, ServerOAuthProvider } from "../../src/upstream/oauth.js";
import {
  type AssertionGrantServer,
  CLIENTS,
  startAssertionGrantServer,
} from "../support/assertion-grant-server.js";

/**
 * The assertion grants against a real authorization server (its own jose checks) and a
 * protected MCP server: workload identity federation (the JWT read from its file or command
 * at each token request) and enterprise-managed authorization (the ID-JAG cached), with the
 * config a user writes.
 */

let auth: AssertionGrantServer;
let dir: string;
const hubs: Hub[] = [];

beforeAll(async () => {
  auth = await startAssertionGrantServer();
  dir = await mkdtemp(join(tmpdir(), "mcplex-assertion-"));
});

afterEach(async () => {
  for (const hub of hubs.splice(0)) await hub.close();
});

afterAll(async () => {
  await auth?.close();
  await rm(dir, { recursive: true, force: true });
});

/** Writes `token` where the config reads it, replacing the file at once (as the kubelet does). */
async function project(file: string, token: string): Promise<void> {
  await writeFile(`${file}.new`, `${token}\n`);
  await rename(`${file}.new`, file);
}

/** A hub of one server, `api`, from the YAML of its `oauth:` block. */
async function hubWith(oauthYaml: string): Promise<Hub> {
  const yaml = `servers:\n  api:\n    url: ${auth.mcpUrl}\n    oauth:\n${oauthYaml.replace(/^/gm, "      ")}\n`;
  const config = parseConfig(yaml, { source: join(dir, "mcplex.yaml"), env: {} });
  const hub = new Hub({ config, oauth: { store: memoryOAuthStore() } });
  hubs.push(hub);
  await hub.start();
  const [status] = hub.servers();
  if (status?.state !== "ready") throw new Error(`api did not start: ${status?.error ?? status?.state}`);
  return hub;
}

/** Calls the server's whoami tool (under whatever name the catalog gives it). */
async function whoami(hub: Hub): Promise<void> {
  const tool = hub.tools().find((t) => t.originalName === "whoami");
  if (tool === undefined) throw new Error("whoami is not listed");
  const result = await hub.callTool(tool.name, {});
  expect(result.isError ?? false).toBe(false);
}

describe("jwt-bearer: workload identity federation", () => {
  it("reads the workload's JWT from its file at each token request", async () => {
    const file = join(dir, "workload-file.jwt");
    const first = await auth.workloadJwt("first");
    await project(file, first);
    const before = auth.tokenRequests.length;
    const hub = await hubWith(`grant: jwt-bearer\nassertion:\n  file: ${file}`);
    await whoami(hub);

    const second = await auth.workloadJwt("second");
    await project(file, second);
    auth.revokeAll(); // the next call is refused: the hub asks for a token again
    await whoami(hub);

    const requests = auth.tokenRequests.slice(before);
    expect(requests.map((r) => r.assertion)).toEqual([first, second]);
    expect(requests.every((r) => r.grant === "urn:ietf:params:oauth:grant-type:jwt-bearer")).toBe(true);
  });

  it("runs the assertion command at each token request", async () => {
    const file = join(dir, "workload-command.jwt");
    const first = await auth.workloadJwt("first");
    await project(file, first);
    const before = auth.tokenRequests.length;
    const hub = await hubWith(`grant: jwt-bearer\nassertion:\n  command: [cat, ${file}]`);
    await whoami(hub);
    const second = await auth.workloadJwt("second");
    await project(file, second);
    auth.revokeAll();
    await whoami(hub);
    expect(auth.tokenRequests.slice(before).map((r) => r.assertion)).toEqual([first, second]);
  });

  it("fails naming the file and the config path when the assertion file is missing", async () => {
    const file = join(dir, "never-projected.jwt");
    const config: OAuthConfig = {
      grant: "jwt-bearer",
      redirectUrl: "http://127.0.0.1:1/callback",
      clientName: "mcplex",
      assertion: { file },
    };
    const before = auth.tokenRequests.length;
    const provider = new ServerOAuthProvider("api", config, { store: memoryOAuthStore() });
    const error = await authorizeServer(provider, new URL(auth.mcpUrl)).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(McplexError);
    expect((error as McplexError).code).toBe("OAUTH_ASSERTION_UNAVAILABLE");
    expect((error as McplexError).message).toContain(file);
    expect((error as McplexError).message).toContain("servers.api.oauth.assertion");
    expect((error as McplexError).message).toContain("ENOENT");
    expect(auth.tokenRequests.length).toBe(before);
  });

  it("says so in the server's status when the hub starts without the file", async () => {
    const file = join(dir, "absent.jwt");
    const yaml = `servers:\n  api:\n    url: ${auth.mcpUrl}\n    oauth:\n      grant: jwt-bearer\n      assertion: { file: ${file} }\n`;
    const hub = new Hub({ config: parseConfig(yaml, { source: join(dir, "m.yaml"), env: {} }) });
    hubs.push(hub);
    await hub.start();
    const [status] = hub.servers();
    expect(status?.state).not.toBe("ready");
    expect(status?.error).toContain(file);
  });
});

describe("id-jag: enterprise-managed authorization", () => {
  const idJagYaml = (idTokenFile: string) =>
    [
      "grant: id-jag",
      `clientId: ${CLIENTS.as.id}`,
      `clientSecret: ${CLIENTS.as.secret}`,
      "idJag:",
      `  tokenEndpoint: ${auth.idpTokenEndpoint}`,
      `  clientId: ${CLIENTS.idp.id}`,
      `  clientSecret: ${CLIENTS.idp.secret}`,
      `  idToken: { file: ${idTokenFile} }`,
    ].join("\n");

  it("exchanges the user's ID token once and presents the cached ID-JAG with client_secret_basic", async () => {
    const file = join(dir, "alice.id-token");
    const idToken = await auth.idToken("alice@example.com");
    await project(file, idToken);
    const [exchangesBefore, requestsBefore] = [auth.exchanges.length, auth.tokenRequests.length];
    const hub = await hubWith(idJagYaml(file));
    await whoami(hub);
    auth.revokeAll();
    await whoami(hub);

    expect(auth.exchanges.slice(exchangesBefore)).toEqual([idToken]);
    const requests = auth.tokenRequests.slice(requestsBefore);
    expect(requests).toHaveLength(2);
    expect(requests[0]?.assertion).toBeDefined();
    expect(requests[1]?.assertion).toBe(requests[0]?.assertion);
    expect(requests.map((r) => [r.basicClient, r.answered])).toEqual([
      [CLIENTS.as.id, "token"],
      [CLIENTS.as.id, "token"],
    ]);
  });

  it("asks the identity provider again for another user", async () => {
    const file = join(dir, "bob.id-token");
    await project(file, await auth.idToken("bob@example.com"));
    const before = auth.exchanges.length;
    const hub = await hubWith(idJagYaml(file));
    await whoami(hub);
    await project(file, await auth.idToken("carol@example.com"));
    auth.revokeAll();
    await whoami(hub);
    expect(auth.exchanges.length - before).toBe(2);
  });
});

describe("the oauth config of the assertion grants", () => {
  const read = (oauth: string) => {
    const yaml = `servers:\n  api:\n    url: https://api.example.com/mcp\n    oauth:\n${oauth.replace(/^/gm, "      ")}\n`;
    try {
      return (
        parseConfig(yaml, { source: "/etc/mcplex/mcplex.yaml", env: {} }).servers[0] as RemoteServerConfig
      ).oauth;
    } catch (error) {
      return (error as Error).message;
    }
  };

  it("resolves a relative assertion file against the config's directory", () => {
    expect(read("grant: jwt-bearer\nassertion: { file: tokens/mcp }")).toMatchObject({
      grant: "jwt-bearer",
      assertion: { file: "/etc/mcplex/tokens/mcp" },
    });
  });

  it("refuses jwt-bearer without an assertion, and an assertion with two sources", () => {
    expect(read("grant: jwt-bearer")).toContain("servers.api.oauth.assertion");
    expect(read("grant: jwt-bearer\nassertion: { file: a, command: [cat, a] }")).toContain(
      "exactly one of file, command or value",
    );
  });

  it("refuses id-jag without the client's credentials at the authorization server", () => {
    const message = read(
      "grant: id-jag\nidJag: { tokenEndpoint: https://idp/token, clientId: c, idToken: { file: t } }",
    );
    expect(message).toContain("clientId and clientSecret");
  });

  it("reads dpop as a boolean", () => {
    expect(read("dpop: true")).toMatchObject({ grant: "authorization_code", dpop: true });
    expect(read("dpop: yes please")).toContain("servers.api.oauth.dpop");
  });
});
