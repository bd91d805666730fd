import { afterAll, beforeAll, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { configOf, fixture } from "../support/config.js";
import { type InProcessGateway, rawHttp, rev2026Request, startGateway } from "../support/gateway.js";
import { attackSize, attackTimeout, reportFigure } from "../support/hostile.js";
import { rng } from "../support/rng.js";

// The hostile tester's auth probes: requests without a token or with a wrong one, over every
// path the HTTP front serves. None may get through: no 2xx, no upgraded WebSocket, and never a
// byte of the catalog in the answer. The valid tokens then still work (the probes did not lock
// anything).

const OPERATOR = "operator-token-0123456789abcdef";
const SCOPED = "scoped-token-0123456789abcdef";
const PROBES = attackSize(300, 1500);

/** Authorization headers that must not pass: absent, other schemes, near misses of real tokens. */
function wrongAuthorization(random: () => number): string | undefined {
  const real = random() < 0.5 ? OPERATOR : SCOPED;
  const cut = 1 + Math.floor(random() * (real.length - 1));
  const forms = [
    undefined,
    "",
    "Bearer",
    "Bearer ",
    `Bearer ${real.slice(0, cut)}`,
    `Bearer ${real}x`,
    `Bearer x${real}`,
    `Bearer ${real.toUpperCase()}`,
    `Bearer ${real.slice(0, -1)}${real.endsWith("f") ? "e" : "f"}`,
    `Basic ${Buffer.from(`user:${real}`).toString("base64")}`,
    `Token ${real}`,
    `Bearer ${real} ${real}`,
    `Bearer ${Math.floor(random() * 1e16).toString(36)}`,
    `Bearer ${"a".repeat(Math.floor(random() * 200))}`,
  ];
  return forms[Math.floor(random() * forms.length)];
}

/** Every request the front answers, as method, path and body. */
const TARGETS: Array<{ method: string; path: string; body?: object; headers?: Record<string, string> }> = [
  {
    method: "POST",
    path: "/mcp",
    body: rev2026Request(1, "tools/list"),
    headers: { "mcp-method": "tools/list", "mcp-protocol-version": "2026-07-28" },
  },
  {
    method: "POST",
    path: "/mcp",
    body: {
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: {
        protocolVersion: "2025-11-25",
        capabilities: {},
        clientInfo: { name: "probe", version: "1" },
      },
    },
  },
  { method: "GET", path: "/mcp", headers: { accept: "text/event-stream" } },
  { method: "DELETE", path: "/mcp", headers: { "mcp-session-id": "probe" } },
  { method: "GET", path: "/sse", headers: { accept: "text/event-stream" } },
  { method: "POST", path: "/messages?sessionId=probe", body: rev2026Request(1, "tools/list") },
  { method: "GET", path: "/dashboard/state" },
  { method: "GET", path: "/dashboard/events", headers: { accept: "text/event-stream" } },
  { method: "GET", path: "/metrics" },
  { method: "GET", path: "/readyz" },
];

let gw: InProcessGateway;
beforeAll(async () => {
  gw = await startGateway(
    configOf([fixture("fx")], {
      profiles: { narrow: { servers: ["fx"], tools: { allow: ["fx__echo"] } } },
      tokens: [{ token: OPERATOR }, { token: SCOPED, profile: "narrow" }],
    }),
  );
});
afterAll(() => gw?.stop());

/** Opens `/ws` with `authorization`; resolves with the refusal's status, or "open" if it was let in. */
function wsAttempt(authorization: string | undefined): Promise<number | "open"> {
  return new Promise((done) => {
    const headers = authorization === undefined ? {} : { authorization };
    const ws = new WebSocket(gw.wsUrl, ["mcp"], { headers });
    ws.on("open", () => {
      ws.close();
      done("open");
    });
    ws.on("unexpected-response", (_req, res) => {
      res.resume();
      done(res.statusCode ?? 0);
    });
    ws.on("error", () => {});
  });
}

describe("auth probes over every path", () => {
  it(
    "lets no request without the right token through, on any path or the WebSocket",
    async () => {
      const random = rng(1500);
      const statuses = new Map<number | "open", number>();
      const leaks: string[] = [];
      for (let i = 0; i < PROBES; i++) {
        const authorization = wrongAuthorization(random);
        if (i % 10 === 9) {
          const outcome = await wsAttempt(authorization);
          statuses.set(outcome, (statuses.get(outcome) ?? 0) + 1);
          if (outcome === "open") leaks.push(`/ws with ${JSON.stringify(authorization)}`);
          continue;
        }
        const target = TARGETS[Math.floor(random() * TARGETS.length)]!;
        const headers: Record<string, string> = {
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
          ...target.headers,
        };
        if (authorization !== undefined) headers.authorization = authorization;
        const answer = await rawHttp(`${gw.origin}${target.path}`, {
          method: target.method,
          headers,
          ...(target.body === undefined ? {} : { body: target.body }),
          timeoutMs: 10_000,
        });
        statuses.set(answer.status, (statuses.get(answer.status) ?? 0) + 1);
        if (answer.status < 300 || answer.body.includes("fx__echo")) {
          leaks.push(
            `${target.method} ${target.path} with ${JSON.stringify(authorization)}: ${answer.status}`,
          );
        }
      }
      expect(leaks).toEqual([]);
      expect([...statuses.keys()].every((status) => status === 401)).toBe(true);
      reportFigure(
        "auth probes",
        `${PROBES} probes over ${TARGETS.length} HTTP targets and /ws: ${[...statuses]
          .map(([status, n]) => `${n} x ${status}`)
          .join(", ")}; 0 got through`,
      );

      // The real tokens still work after the probes.
      const listed = await rawHttp(`${gw.origin}/mcp`, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
          "mcp-method": "tools/list",
          "mcp-protocol-version": "2026-07-28",
          authorization: `Bearer ${SCOPED}`,
        },
        body: rev2026Request(2, "tools/list"),
      });
      expect(listed.status).toBe(200);
      expect(listed.body).toContain("fx__echo");
      expect(await wsAttempt(`Bearer ${OPERATOR}`)).toBe("open");
    },
    attackTimeout(60_000, 300_000),
  );
});
