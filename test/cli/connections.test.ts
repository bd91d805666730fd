import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import { connectionsCommandWith } from "../../src/cli/commands/connections.js";
import { FileCredentialVault } from "../../src/credentials/file-credential-vault.js";
import { memoryCredentialVault } from "../../src/credentials/memory-vault.js";
import {
  type ConnectionsGateway,
  OPERATOR_TOKEN,
  PROFILE_TOKEN,
  startConnectionsGateway,
  USERS,
} from "../dashboard/connections-gateway.js";
import {
  oauthRecord,
  SECRET_ACCESS_TOKEN,
  SECRET_REFRESH_TOKEN,
  SECRET_VALUE,
  testRevoke,
  testUserKey,
  testUserOf,
  valuesRecord,
} from "../dashboard/test-vault.js";
import { type CliResult, runCli } from "../support/cli.js";
import { freePort } from "../support/free-port.js";
import { type AuthServer, startAuthServer } from "../support/oidc-provider.js";

// `mcplex connections list|revoke`: on a running gateway through its operator endpoints (the
// built CLI against a gateway with sign-in at a real authorization server), and on a vault
// with no gateway running (the command's function, given the vault).

let as: AuthServer;
const vault = memoryCredentialVault();
const revoke = testRevoke(vault);
let gw: ConnectionsGateway;
const outputs: string[] = [];

beforeAll(async () => {
  as = await startAuthServer({ users: USERS });
  gw = await startConnectionsGateway(as, { vault, userOf: testUserOf, revoke });
}, 60_000);
afterAll(async () => {
  await gw?.close();
  await as?.close();
});

const key = (sub: string) => testUserKey(as.issuer, sub);
beforeEach(async () => {
  for (const user of await vault.users()) await vault.delete(user);
  revoke.calls.length = 0;
  await vault.put(key("alice"), "github", oauthRecord("alice", Date.UTC(2026, 0, 2, 3, 4, 5)));
  await vault.put(key("alice"), "notion", valuesRecord("alice", Date.UTC(2026, 0, 3)));
  await vault.put(key("bob"), "github", oauthRecord("bob", Date.UTC(2026, 0, 4)));
});

async function cli(...args: string[]): Promise<CliResult> {
  const result = await runCli(["connections", ...args]);
  outputs.push(result.stdout, result.stderr);
  return result;
}
const remote = (token = OPERATOR_TOKEN) => ["--url", gw.origin, "--token", token];

describe("mcplex connections on a running gateway", { timeout: 60_000 }, () => {
  it("lists users and their connections, how and since when", async () => {
    const { code, stdout, stderr } = await cli("list", ...remote());
    expect(stderr).toBe("");
    expect(code).toBe(0);
    expect(stdout.split("\n")).toEqual([
      `alice  key ${key("alice")}`,
      "  github  oauth         since 2026-01-02T03:04:05.000Z",
      "  notion  values        since 2026-01-03T00:00:00.000Z",
      `bob  key ${key("bob")}`,
      "  github  oauth         since 2026-01-04T00:00:00.000Z",
      "",
    ]);
    const one = await cli("list", "--user", "bob", "--json", ...remote());
    expect(JSON.parse(one.stdout)).toEqual({
      users: [
        {
          key: key("bob"),
          subject: "bob",
          connections: [{ server: "github", connectedAt: Date.UTC(2026, 0, 4), kinds: ["oauth"] }],
        },
      ],
    });
  });

  it("revokes one server of a user named by subject, through the gateway's revoke", async () => {
    const { code, stdout } = await cli("revoke", "--user", "alice", "--server", "github", ...remote());
    expect(code).toBe(0);
    expect(stdout).toBe("alice github: deleted, and revoked at the server\n");
    expect(revoke.calls).toEqual([[key("alice"), "github"]]);
    expect(await vault.servers(key("alice"))).toEqual(["notion"]);
    expect(await vault.servers(key("bob"))).toEqual(["github"]);
  });

  it("revokes all of a user's connections with --all, as a signed-in operator too", async () => {
    const carol = (await as.signIn({ user: "carol", resource: gw.origin, scopes: ["mcp:tools"] }))
      .accessToken;
    const { code, stdout } = await cli("revoke", "--user", key("alice"), "--all", ...remote(carol));
    expect(code).toBe(0);
    expect(stdout).toBe("alice github: deleted, and revoked at the server\nalice notion: deleted\n");
    expect(await vault.users()).toEqual([key("bob")]);
  });

  it("says when a server did not revoke, or cannot, and exits 3 when one refused", async () => {
    revoke.answers.set("github", {
      server: "github",
      revocation: "failed",
      error: "the revocation endpoint answered 503 for the refresh_token",
    });
    revoke.answers.set("notion", { server: "notion", revocation: "unsupported" });
    try {
      const { code, stdout, stderr } = await cli("revoke", "--user", "alice", "--all", ...remote());
      expect(code).toBe(3);
      expect(stderr).toBe(
        "alice github: deleted, but the server did not revoke it: the revocation endpoint answered 503 for the refresh_token\n",
      );
      expect(stdout).toBe(
        "alice notion: deleted; the server offers no revocation, so a token it issued stays valid there until it expires\n",
      );
      expect(await vault.servers(key("alice"))).toEqual([]);
    } finally {
      revoke.answers.clear();
    }
  });

  it("says who is unknown, which server the user has not connected, and what revoke needs", async () => {
    const nobody = await cli("revoke", "--user", "zed", "--all", ...remote());
    expect(nobody.code).toBe(2);
    expect(nobody.stderr).toContain('mcplex: no user "zed" holds a connection');
    expect(nobody.stderr).toContain("hint: users with connections: alice, bob");
    const server = await cli("revoke", "--user", "bob", "--server", "notion", ...remote());
    expect(server.code).toBe(2);
    expect(server.stderr).toContain('mcplex: user "bob" has not connected server "notion"');
    expect(server.stderr).toContain('hint: "bob" has connected: github');
    const which = await cli("revoke", "--user", "bob", ...remote());
    expect(which.code).toBe(2);
    expect(which.stderr).toContain("revoke needs one of --server NAME (one server) or --all");
    expect(revoke.calls).toEqual([]);
  });

  it("refuses a token that is not an operator's, a bad token, and says what to use", async () => {
    const alice = (await as.signIn({ user: "alice", resource: gw.origin, scopes: ["mcp:tools"] }))
      .accessToken;
    for (const token of [PROFILE_TOKEN, alice]) {
      const { code, stderr } = await cli("revoke", "--user", "bob", "--all", ...remote(token));
      expect(code).toBe(2);
      expect(stderr).toContain(`mcplex: not an operator of the gateway at ${gw.origin}: Forbidden`);
      expect(stderr).toContain("hint: use an operator's token");
    }
    const bad = await cli("list", ...remote("not-a-token-of-this-gateway-0123456789"));
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("refused the credential");
    expect(revoke.calls).toEqual([]);
    expect(await vault.servers(key("bob"))).toEqual(["github"]);
  });

  it("says when the gateway cannot be reached", async () => {
    // A port nothing listens on now (another process could take it: then not ECONNREFUSED).
    const port = await freePort();
    const url = `http://127.0.0.1:${port}`;
    const { code, stderr } = await cli("list", "--url", url, "--token", OPERATOR_TOKEN);
    expect(code).toBe(3);
    expect(stderr).toContain(`cannot reach the gateway at ${url}: ECONNREFUSED`);
  });
});

describe("mcplex connections on a vault with no gateway running", () => {
  let printed: string[];
  beforeEach(() => {
    printed = [];
    const keep = (...parts: unknown[]) => {
      printed.push(parts.join(" "));
    };
    vi.spyOn(console, "log").mockImplementation(keep);
    vi.spyOn(console, "error").mockImplementation(keep);
  });
  afterEach(() => {
    outputs.push(...printed);
    vi.restoreAllMocks();
  });
  const offline = connectionsCommandWith({ openVault: async () => vault });

  it("lists the vault's users", async () => {
    expect(await offline(["list", "--user", "alice"])).toBe(0);
    expect(printed).toEqual([
      `alice  key ${key("alice")}`,
      "  github  oauth         since 2026-01-02T03:04:05.000Z",
      "  notion  values        since 2026-01-03T00:00:00.000Z",
    ]);
  });

  it("deletes from the vault, and says that a token is not revoked at the server offline", async () => {
    expect(await offline(["revoke", "--user", "alice", "--all"])).toBe(0);
    expect(printed).toEqual([
      "alice github: deleted here; not revoked at the server (offline: a token it issued stays valid there until it expires)",
      "alice notion: deleted",
    ]);
    expect(await vault.users()).toEqual([key("bob")]);
    await expect(offline(["revoke", "--user", "alice", "--all"])).rejects.toThrow(
      'no user "alice" holds a connection',
    );
  });
});

describe("mcplex connections on this machine's file vault", { timeout: 60_000 }, () => {
  const home = mkdtempSync(join(tmpdir(), "mcplex-connections-home-"));
  const env = { MCPLEX_HOME: home, MCPLEX_SECRET_KEY: Buffer.alloc(32, 9).toString("base64") };
  afterAll(() => rmSync(home, { recursive: true, force: true }));

  it("lists and revokes what the built CLI finds in credentials.json beside the secret store", async () => {
    const files = new FileCredentialVault({ env });
    await files.put(testUserKey("https://id.example", "alice"), "github", oauthRecord("alice"));
    const config = join(home, "mcplex.yaml");
    writeFileSync(config, "servers: {}\n");
    const listed = await runCli(["connections", "list", "--config", config], { env });
    expect(listed.code, listed.stderr).toBe(0);
    expect(listed.stdout).toContain("alice  key ");
    expect(listed.stdout).toContain("github  oauth");
    const revoked = await runCli(["connections", "revoke", "--user", "alice", "--all", "--config", config], {
      env,
    });
    expect(revoked.code, revoked.stderr).toBe(0);
    expect(revoked.stdout).toContain("alice github: deleted here; not revoked at the server");
    expect(await files.users()).toEqual([]);
    for (const output of [listed.stdout, listed.stderr, revoked.stdout, revoked.stderr])
      expect(output).not.toContain(SECRET_ACCESS_TOKEN);
  });

  it("says a cluster's vault is in Redis, reached through a running replica", async () => {
    const config = join(home, "cluster.yaml");
    writeFileSync(config, `servers: {}\ncluster:\n  url: redis://127.0.0.1:1\n  secret: ${"s".repeat(40)}\n`);
    const result = await runCli(["connections", "list", "--config", config], { env });
    expect(result.code).not.toBe(0);
    expect(result.stderr).toContain("keeps users' credentials in Redis (cluster:)");
    expect(result.stderr).toContain("--url");
  });
});

describe("what the command printed", () => {
  it("holds no token, no value", () => {
    const all = outputs.join("\n");
    expect(all.length).toBeGreaterThan(0);
    for (const secret of [
      SECRET_ACCESS_TOKEN,
      SECRET_REFRESH_TOKEN,
      SECRET_VALUE,
      "client-secret",
      OPERATOR_TOKEN,
    ])
      expect(all).not.toContain(secret);
  });
});
