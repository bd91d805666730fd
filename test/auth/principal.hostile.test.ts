import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningGateway, serve } from "../../src/assembly/serve.js";
import { parseConfig } from "../../src/config/parse-config.js";
import { rawHttp } from "../support/gateway.js";
import { attackTimeout, reportFigure } from "../support/hostile.js";
import { type AuthServer, startAuthServer } from "../support/oidc-provider.js";
import { openSession } from "./guarded-entries.js";

// The outside tester's attacks on who a caller is (issue 32, points 1-5), through `serve()` on
// loopback without `auth.resource`, with two real authorization servers (oidc-provider: A and
// B, both with a user `root-admin`) and a third issuer C whose introspection endpoint (RFC 7662)
// records every token shown to it and calls its own `rc_` tokens active client-credentials
// tokens (no `sub`). The rights probed are the operator's: `/metrics` answers 200 only to them.

/** The introspection endpoint of issuer C: what it was shown, and the tokens it issued. */
interface RecordingIssuer {
  readonly issuer: string;
  readonly endpoint: string;
  /** Every token shown to it, in order. */
  readonly seen: string[];
  /** Issues an opaque `rc_` token of a client (no `sub`) for `audience`. */
  mint(client: string, audience: string): string;
  close(): Promise<void>;
}

async function startRecordingIssuer(): Promise<RecordingIssuer> {
  const seen: string[] = [];
  const minted = new Map<string, { client: string; audience: string }>();
  let issuer = "";
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const token = new URLSearchParams(Buffer.concat(chunks).toString("utf8")).get("token") ?? "";
      seen.push(token);
      const grant = minted.get(token);
      res.writeHead(200, { "content-type": "application/json" });
      res.end(
        JSON.stringify(
          grant === undefined
            ? { active: false }
            : {
                active: true,
                iss: issuer,
                client_id: grant.client,
                aud: grant.audience,
                token_type: "Bearer",
                exp: Math.floor(Date.now() / 1000) + 600,
              },
        ),
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  let count = 0;
  return {
    issuer,
    endpoint: `${issuer}/introspect`,
    seen,
    mint(client, audience) {
      const token = `rc_${client}_${++count}_${"x".repeat(24)}`;
      minted.set(token, { client, audience });
      return token;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

let a: AuthServer;
let b: AuthServer;
let c: RecordingIssuer;
let running: RunningGateway;
/** `http://127.0.0.1:<port>`: where the gateway is bound. */
let origin: string;
let port: number;

/** The issuers: C first, so that before the fix C was asked about every opaque token first. */
function issuersYaml(): string {
  const rs = a.resourceServerClient;
  return `  issuers:
    - issuer: ${c.issuer}
      introspection: { endpoint: ${c.endpoint}, clientId: mcplex, clientSecret: c-secret-0123456789, prefix: rc_ }
    - issuer: ${a.issuer}
      introspection: { clientId: ${rs.clientId}, clientSecret: ${rs.clientSecret} }
    - issuer: ${b.issuer}
`;
}

beforeAll(async () => {
  [a, b, c] = await Promise.all([
    startAuthServer({ users: [{ sub: "root-admin" }, { sub: "alice", email: "alice@example.com" }] }),
    startAuthServer({ users: [{ sub: "root-admin" }] }),
    startRecordingIssuer(),
  ]);
  const yaml = `servers: {}
auth:
${issuersYaml()}  access:
    - when: { issuer: ${a.issuer}, sub: root-admin }
      operator: true
    - when: { issuer: ${a.issuer}, groups: [platform] }
      operator: true
    - when: { issuer: ${a.issuer}, email: "*@example.com" }
      operator: true
    - when: { issuer: ${c.issuer}, sub: root-admin }
      operator: true
    - when: { issuer: ${c.issuer}, client: ci-bot }
      operator: true
    - when: { issuer: ${b.issuer}, sub: root-admin }
`;
  const config = parseConfig(yaml, { source: "principal.yaml", env: {} });
  running = await serve({ config, transport: "http", http: { host: "127.0.0.1", port: 0 }, watch: false });
  await running.started;
  origin = running.http!.url.replace(/\/mcp$/, "");
  port = Number(new URL(origin).port);
  // A's tokens for the gateway itself come out opaque (checked by introspection at A).
  a.setResource(`${origin}/mcp`, { format: "opaque" });
}, 60_000);

afterAll(async () => {
  await running?.close();
  await Promise.all([a?.close(), b?.close(), c?.close()]);
});

/** The status `/metrics` answers `token`, with `host` as the Host header when given. */
async function metricsStatus(token: string, host?: string): Promise<number> {
  const answer = await rawHttp(`${origin}/metrics`, {
    method: "GET",
    headers: { authorization: `Bearer ${token}`, ...(host === undefined ? {} : { host }) },
  });
  return answer.status;
}

describe("1. a rule is for one issuer's callers", () => {
  it("refuses a config whose rule names no issuer while several are listed, at auth.access[0].when.issuer", () => {
    const tester = `servers: {}
auth:
${issuersYaml()}  access:
    - when: { sub: [root-admin] }
      operator: true
`;
    expect(() => parseConfig(tester, { source: "tester.yaml", env: {} })).toThrow(
      /auth\.access\[0\]\.when\.issuer.*is required when auth\.issuers lists several/s,
    );
  });

  it("gives issuer B's root-admin none of the operator rights a rule grants issuer A's root-admin", async () => {
    const aud = `${origin}/mcp`;
    const fromA = await metricsStatus(await a.sign({ sub: "root-admin", aud }));
    const fromB = await metricsStatus(await b.sign({ sub: "root-admin", aud }));
    reportFigure("issuer B's root-admin on /metrics", `${fromB} (A's: ${fromA})`);
    expect(fromA).toBe(200);
    expect(fromB).toBe(403);
  });

  it("keeps a 2025 session of A's root-admin from B's root-admin", async () => {
    const aud = `${origin}/mcp`;
    const session = await openSession(origin, await a.sign({ sub: "root-admin", aud }));
    const answer = await rawHttp(`${origin}/mcp`, {
      headers: {
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        authorization: `Bearer ${await b.sign({ sub: "root-admin", aud })}`,
        "mcp-session-id": session,
        "mcp-protocol-version": "2025-11-25",
      },
      body: { jsonrpc: "2.0", id: 2, method: "tools/list" },
    });
    expect(answer.status).toBe(403);
    expect(answer.body).toContain("belongs to another user");
  });
});

describe("2. a token without sub is a machine caller", () => {
  it("does not take an opaque client-credentials token of client_id root-admin as the user root-admin", async () => {
    const status = await metricsStatus(c.mint("root-admin", `${origin}/mcp`));
    reportFigure("client-credentials token of client root-admin on /metrics", String(status));
    expect(status).toBe(403);
  });

  it("admits a machine caller where a rule names its client (when.client)", async () => {
    expect(await metricsStatus(c.mint("ci-bot", `${origin}/mcp`))).toBe(200);
  });
});

describe("3. an opaque token is shown to its own issuer only", () => {
  it("sends A's opaque token to A's introspection endpoint, never to C's; and C's to C only", async () => {
    const { accessToken } = await a.signIn({ user: "root-admin", resource: `${origin}/mcp` });
    expect(accessToken.split(".")).toHaveLength(1);
    const seenBefore = c.seen.length;
    const askedBefore = a.introspections;
    expect(await metricsStatus(accessToken)).toBe(200);
    const shownToC = c.seen.slice(seenBefore).filter((token) => token === accessToken).length;
    reportFigure("A's opaque token shown to C's introspection endpoint", `${shownToC} times`);
    expect(shownToC).toBe(0);
    expect(a.introspections).toBe(askedBefore + 1);

    const cToken = c.mint("nobody", `${origin}/mcp`);
    const asked = a.introspections;
    await metricsStatus(cToken);
    expect(a.introspections).toBe(asked);
    expect(c.seen.at(-1)).toBe(cToken);
  });
});

describe("4. the audience is the gateway's bound address, never the Host header", () => {
  it("refuses a token minted for another local app, whatever Host comes with it", async () => {
    const probes = [
      { aud: "http://localhost:9999/mcp", host: "localhost:9999" },
      { aud: `http://[::1]:${port}/mcp`, host: `[::1]:${port}` },
      { aud: "http://127.0.0.1:9999/mcp", host: "127.0.0.1:9999" },
    ];
    const through: string[] = [];
    for (const { aud, host } of probes) {
      const status = await metricsStatus(await a.sign({ sub: "root-admin", aud }), host);
      if (status !== 401) through.push(`${aud}: ${status}`);
    }
    reportFigure("tokens of another local app admitted", `${through.length} of ${probes.length}`);
    expect(through).toEqual([]);
    // The gateway's own URLs: the address it is bound to, and localhost on its port.
    for (const aud of [`${origin}/mcp`, `http://localhost:${port}/mcp`])
      expect(await metricsStatus(await a.sign({ sub: "root-admin", aud }))).toBe(200);
  });

  it("names in its metadata a URL it is bound to, whatever the Host", async () => {
    const answer = await rawHttp(`${origin}/.well-known/oauth-protected-resource/mcp`, {
      method: "GET",
      headers: { host: "localhost:9999" },
    });
    expect(answer.status).toBe(200);
    expect((answer.json as { resource: string }).resource).toBe(`${origin}/mcp`);
  });
});

describe("5. claims match by type", () => {
  it(
    "refuses a groups string, a list of addresses, an address with a line break and an unverified email",
    async () => {
      const aud = `${origin}/mcp`;
      const probes: Record<string, Record<string, unknown>> = {
        "groups as a string": { sub: "u1", groups: "contractors-not platform" },
        "groups with a non-string": { sub: "u2", groups: ["platform", 7] },
        "two addresses": { sub: "u3", email: "x@evil.com,y@example.com", email_verified: true },
        "a line break": { sub: "u4", email: "x@evil.com\n@example.com", email_verified: true },
        "a display name": { sub: "u5", email: "Eve <x@evil.com> y@example.com", email_verified: true },
        "unverified email": { sub: "u6", email: "mallory@example.com", email_verified: false },
        "no email_verified": { sub: "u7", email: "mallory@example.com" },
        "email_verified as a string": { sub: "u8", email: "mallory@example.com", email_verified: "true" },
      };
      const through: string[] = [];
      for (const [name, claims] of Object.entries(probes)) {
        const status = await metricsStatus(await a.sign({ ...claims, aud }));
        if (status !== 403) through.push(`${name}: ${status}`);
      }
      reportFigure(
        "loosely matched claims given operator rights",
        `${through.length} of ${Object.keys(probes).length}`,
      );
      expect(through).toEqual([]);
      // The same rules admit what they mean to.
      expect(await metricsStatus(await a.sign({ sub: "u9", groups: ["platform"], aud }))).toBe(200);
      expect(
        await metricsStatus(
          await a.sign({ sub: "u10", email: "Ann@Example.com", email_verified: true, aud }),
        ),
      ).toBe(200);
    },
    attackTimeout(20_000, 60_000),
  );
});
