import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RotatingFile } from "../../src/audit/rotating-file.js";
import { RpcError } from "../../src/errors.js";
import type { Authenticator } from "../../src/fronts/authenticator.js";
import type { Identity } from "../../src/hub/call-pipeline.js";
import { type AuditRecord, auditLog } from "../../src/interceptors/audit-log.js";
import { configOf, fixture } from "../support/config.js";
import { connectHttp, type InProcessGateway, rawHttp, startGateway } from "../support/gateway.js";
import { until } from "../support/wait.js";

// Signed-in users, as the coming OAuth resource server will admit them (an Authenticator that
// answers `via: "oauth"` with subject, issuer, client and scopes): the audit line and the
// dashboard name the user and the client; the dashboard shows who called to operators only.

const ISSUER = "https://login.example.com";
const USERS: Record<string, Identity> = {
  "alice-access-token": {
    key: "oauth:alice",
    via: "oauth",
    subject: "alice@example.com",
    issuer: ISSUER,
    client: "claude-code",
    scopes: ["mcp:tools"],
    operator: true,
  },
  "bob-access-token": {
    key: "oauth:bob",
    via: "oauth",
    subject: "bob@example.com",
    issuer: ISSUER,
    client: "cursor",
    scopes: ["mcp:tools"],
    profile: "sales",
    operator: false,
  },
};

const signIn: Authenticator = {
  required: true,
  async authenticate(request) {
    const token = String(request.headers.authorization ?? "").replace(/^Bearer /, "");
    const identity = USERS[token];
    if (identity === undefined)
      return { ok: false, status: 401, message: "Unauthorized", wwwAuthenticate: "Bearer" };
    return { ok: true, identity };
  },
};

let dir: string;
let file: string;
let sink: RotatingFile;
let gw: InProcessGateway;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "mcplex-audit-identity-"));
  file = join(dir, "audit.log");
  sink = await RotatingFile.open(file, { maxSize: 1 << 20, keep: 1 });
  gw = await startGateway(
    configOf([fixture("fx")], { profiles: { sales: { servers: ["fx"], tools: {} } } }),
    { authenticator: signIn },
    { outer: [auditLog({ sink, redact: (text) => text })] },
  );
}, 60_000);
afterAll(async () => {
  await gw?.stop();
  await sink?.close();
  await rm(dir, { recursive: true, force: true });
});

async function callAs(token: string, name: string, message: string): Promise<void> {
  const client = await connectHttp(gw.url, { token, name });
  try {
    await client.callTool({ name: "fx__echo", arguments: { message } });
  } finally {
    await client.close();
  }
}

async function lineOf(message: string, client: string, target = "fx__echo"): Promise<AuditRecord> {
  let found: AuditRecord | undefined;
  await until(
    async () => {
      const text = await readFile(file, "utf8").catch(() => "");
      found = text
        .split("\n")
        .filter(Boolean)
        .map((line) => JSON.parse(line) as AuditRecord)
        .find((r) => r.client === client && r.target === target);
      return found !== undefined;
    },
    15_000,
    `the audit line of ${message}`,
  );
  return found!;
}

describe("signed-in users in the audit trail", () => {
  it("names the user, the issuer and the client they signed in with, via oauth", async () => {
    await callAs("alice-access-token", "alice-sdk", "from alice");
    expect(await lineOf("from alice", "claude-code")).toMatchObject({
      subject: "alice@example.com",
      via: "oauth",
      issuer: ISSUER,
      // The OAuth client the token names, over the client's own name for itself.
      client: "claude-code",
      front: "http",
      target: "fx__echo",
      outcome: "ok",
    });
    expect(await readFile(file, "utf8")).not.toContain("alice-access-token");
  });
});

describe("refusals after admission", () => {
  it("are audited with the error's code, whichever layer refuses (here a hub interceptor's policy)", async () => {
    // A policy among the hub's interceptors, which run inside the audit layer: it refuses
    // before the server, with a code of its own (auth.require's scope check is a gateway layer,
    // test/auth/audit-sign-in.test.ts).
    const off = gw.hub.use((next) => async (request) => {
      const scopes = request.context.identity?.scopes ?? [];
      if (
        request.target?.kind === "tool" &&
        request.target.name === "fx__fail" &&
        !scopes.includes("fx:fail")
      )
        throw new RpcError(-32099, "Forbidden by policy: fx__fail needs the scope fx:fail");
      return next(request);
    });
    try {
      const client = await connectHttp(gw.url, { token: "alice-access-token", name: "alice-scope" });
      try {
        await expect(client.callTool({ name: "fx__fail", arguments: {} })).rejects.toThrow(
          /Forbidden by policy/,
        );
      } finally {
        await client.close();
      }
    } finally {
      off();
    }
    expect(await lineOf("the refused call", "claude-code", "fx__fail")).toMatchObject({
      subject: "alice@example.com",
      target: "fx__fail",
      server: "fx",
      // A code with no name in the table: its number.
      outcome: "-32099",
      code: -32099,
    });
  });
});

describe("the dashboard's calls", () => {
  it("show operators who called what, and hide who from a profile's viewers", async () => {
    await callAs("alice-access-token", "alice-sdk", "seen by the operator");
    await callAs("bob-access-token", "bob-sdk", "seen by bob");
    const state = async (token: string) => {
      const res = await rawHttp(`${gw.origin}/dashboard/state`, {
        method: "GET",
        headers: { authorization: `Bearer ${token}` },
      });
      expect(res.status).toBe(200);
      return (res.json as { calls: { recent: Array<Record<string, unknown>> } }).calls.recent;
    };
    const all = await state("alice-access-token");
    expect(all).toContainEqual(
      expect.objectContaining({ subject: "alice@example.com", client: "claude-code", target: "fx__echo" }),
    );
    expect(all).toContainEqual(
      expect.objectContaining({ subject: "bob@example.com", client: "cursor", profile: "sales" }),
    );
    // Nor in a metric's labels (bounded cardinality).
    const metrics = await rawHttp(`${gw.origin}/metrics`, {
      method: "GET",
      headers: { authorization: "Bearer alice-access-token" },
    });
    expect(metrics.body).toContain("mcplex_requests_total");
    expect(metrics.body).not.toMatch(/alice|bob|claude-code|oauth:/);
    const bobs = await state("bob-access-token");
    expect(bobs.length).toBeGreaterThan(0);
    for (const call of bobs) {
      expect(call.profile).toBe("sales");
      expect(call).not.toHaveProperty("subject");
      expect(call).not.toHaveProperty("client");
    }
  });

  it("leave who out of a profile viewer's live events too", async () => {
    const controller = new AbortController();
    const res = await fetch(`${gw.origin}/dashboard/events`, {
      headers: { authorization: "Bearer bob-access-token" },
      signal: controller.signal,
    });
    expect(res.status).toBe(200);
    const reader = res.body!.getReader();
    let text = "";
    const ended = (async () => {
      while (!text.includes('"call-ended"')) {
        const { value, done } = await reader.read();
        if (done) break;
        text += new TextDecoder().decode(value);
      }
    })();
    await callAs("bob-access-token", "bob-live", "live");
    await ended;
    controller.abort();
    expect(text).toContain('"target":"fx__echo"');
    expect(text).not.toContain("bob@example.com");
    expect(text).not.toContain('"subject"');
  });
});
