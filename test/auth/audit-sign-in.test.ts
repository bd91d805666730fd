import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningGateway, serve } from "../../src/assembly/serve.js";
import { parseConfig } from "../../src/config/parse-config.js";
import type { AuditRecord } from "../../src/interceptors/audit-log.js";
import { COMMANDS, connectHttp, postRev2026, rev2026Request } from "../support/gateway.js";
import { type AuthServer, startAuthServer } from "../support/oidc-provider.js";
import { until } from "../support/wait.js";

// The audit trail of users signed in through a real authorization server (oidc-provider, the
// code flow with PKCE): each line names the user, the issuer and the OAuth client, and a call
// the scope check refuses (`auth.require`) is a line too, with the error's code.

let as: AuthServer;
let running: RunningGateway;
let dir: string;
let file: string;
let resource: string;

beforeAll(async () => {
  as = await startAuthServer();
  dir = await mkdtemp(join(tmpdir(), "mcplex-audit-sign-in-"));
  file = join(dir, "audit.log");
  const config = parseConfig(
    `serve:
  readyWait: 1m
servers:
  fx:
    command: ${JSON.stringify(COMMANDS.fixture.command)}
    args: ${JSON.stringify(COMMANDS.fixture.args)}
auth:
  issuers:
    - issuer: ${as.issuer}
  require:
    - tools: ["fx__fail"]
      scopes: [github:write]
audit:
  to: ${file}
`,
    { source: join(dir, "mcplex.yaml"), env: {} },
  );
  running = await serve({ config, transport: "http", http: { host: "127.0.0.1", port: 0 }, watch: false });
  await running.started;
  resource = running.http!.url;
}, 60_000);
afterAll(async () => {
  await running?.close();
  await as?.close();
  await rm(dir, { recursive: true, force: true });
});

async function lineWhere(match: (r: AuditRecord) => boolean): Promise<AuditRecord> {
  let found: AuditRecord | undefined;
  await until(
    async () => {
      const text = await readFile(file, "utf8").catch(() => "");
      found = text
        .split("\n")
        .filter(Boolean)
        .map((line) => JSON.parse(line) as AuditRecord)
        .find(match);
      return found !== undefined;
    },
    15_000,
    "the audit line",
  );
  return found!;
}

describe("the audit trail of signed-in users", () => {
  it("names the user, the issuer and the OAuth client of each call, and never the token", async () => {
    const signedIn = await as.signIn({ user: "alice", resource, scopes: ["mcp:tools"] });
    const client = await connectHttp(resource, { token: signedIn.accessToken, name: "alice-agent" });
    try {
      await client.callTool({ name: "fx__echo", arguments: { message: "signed in" } });
    } finally {
      await client.close();
    }
    expect(await lineWhere((r) => r.subject === "alice" && r.target === "fx__echo")).toMatchObject({
      via: "oauth",
      issuer: as.issuer,
      client: signedIn.client.clientId,
      front: "http",
      method: "tools/call",
      server: "fx",
      outcome: "ok",
    });
    expect(await readFile(file, "utf8")).not.toContain(signedIn.accessToken);
  });

  it("records a call the scope check refuses, with the error's code, before any server", async () => {
    const signedIn = await as.signIn({ user: "bob", resource, scopes: ["mcp:tools"] });
    const answer = await postRev2026(
      resource,
      rev2026Request("needs-scope", "tools/call", { name: "fx__fail", arguments: {} }),
      { authorization: `Bearer ${signedIn.accessToken}` },
    );
    expect(answer.status).toBe(403);
    expect(await lineWhere((r) => r.requestId === "needs-scope")).toMatchObject({
      subject: "bob",
      via: "oauth",
      target: "fx__fail",
      server: "fx",
      outcome: "Forbidden",
      code: -32003,
    });
  });
});
