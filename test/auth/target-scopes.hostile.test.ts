/**
 * `auth.require` follows the target a request resolved to, whatever name or route reached it
 * (issue 32, point 13). One rule, `tools: ["alpha__*"]` (and `jobs__*`) needing `admin`, against
 * every way to a tool: its exposed name, an MCP App's unprefixed name (the client declares the
 * Apps extension), `call_tool` in search mode, a `run_code` script in code mode, and a task:
 * created by a task-augmented call, then read by the same user with a token without `admin`. A
 * token without `admin` is refused on each; one with it gets through. Real pieces: `serve()` over
 * HTTP, tokens signed by the real oidc-provider of test/support/oidc-provider.ts, the skills
 * fixture as the app server and the tasks fixture, both over stdio.
 */
import { resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningGateway, serve } from "../../src/assembly/serve.js";
import { parseConfig } from "../../src/config/parse-config.js";
import { TASKS_EXTENSION } from "../../src/protocol/tasks.js";
import { COMMANDS, postRev2026, resultText, rev2026Request } from "../support/gateway.js";
import { attackSize, attackTimeout, reportFigure } from "../support/hostile.js";
import { type AuthServer, startAuthServer } from "../support/oidc-provider.js";
import { until } from "../support/wait.js";

const APPS = { "io.modelcontextprotocol/ui": { mimeTypes: ["text/html;profile=mcp-app"] } };
const CAPABILITIES = { extensions: { ...APPS, [TASKS_EXTENSION]: {} } };
/** What the app tool answers: seen only when the call reached it. */
const REPORT = "The report of alpha";

let as: AuthServer;
let running: RunningGateway;
let origin: string;

beforeAll(async () => {
  as = await startAuthServer();
  const skills = resolve("test/fixtures/servers/skills-server.mjs");
  const text = `serve:
  readyWait: 1m
servers:
  alpha:
    command: ${JSON.stringify(process.execPath)}
    args: [${JSON.stringify(skills)}, --origin, alpha]
  jobs:
    command: ${JSON.stringify(COMMANDS.tasks.command)}
    args: ${JSON.stringify(COMMANDS.tasks.args)}
profiles:
  no-report:
    tools: { deny: [alpha__show_report] }
  jobs-only:
    tools: { allow: ["jobs__*"] }
auth:
  issuers:
    - issuer: ${as.issuer}
  scopes: ["mcp:tools"]
  access:
    - when: { sub: [searcher] }
      mode: search
    - when: { sub: [coder] }
      mode: code
    - when: { sub: [narrow] }
      profile: no-report
    - when: { sub: [jobs-only] }
      profile: jobs-only
    - when: { sub: ["*"] }
  require:
    - tools: ["alpha__*"]
      scopes: [admin]
    - tools: ["jobs__*"]
      scopes: [admin]
`;
  const config = parseConfig(text, { source: "target-scopes.yaml", env: {} });
  running = await serve({ config, transport: "http", http: { host: "127.0.0.1", port: 0 }, watch: false });
  await running.started;
  origin = running.http!.url.replace(/\/mcp$/, "");
}, 60_000);

afterAll(async () => {
  await running?.close();
  await as?.close();
});

let ids = 0;

/** A token of `sub`, with `admin` or without. */
const token = (sub: string, admin: boolean) =>
  as.sign({ sub, aud: `${origin}/mcp`, scope: admin ? "mcp:tools admin" : "mcp:tools" });

type Answer = { status: number; result?: Record<string, unknown>; error?: { code: number; message: string } };

async function rpc(bearer: string, method: string, params: Record<string, unknown>): Promise<Answer> {
  const headers: Record<string, string> = { authorization: `Bearer ${bearer}` };
  // A task's requests name it in Mcp-Name.
  if (typeof params.taskId === "string") headers["mcp-name"] = params.taskId;
  const res = await postRev2026(
    `${origin}/mcp`,
    rev2026Request(++ids, method, params, CAPABILITIES),
    headers,
  );
  const json = (res.json ?? {}) as Omit<Answer, "status">;
  return { status: res.status, ...json };
}

/** Whether a `tools/call` answer carries what the app tool answers (the call reached it). */
const reachedReport = (answer: Answer) =>
  answer.status === 200 && answer.result !== undefined && resultText(answer.result).includes(REPORT);

/** A task of `jobs__slow_compute` created with an `admin` token of `sub`, completed: its handle. */
async function completedTask(sub: string): Promise<string> {
  const created = await rpc(await token(sub, true), "tools/call", {
    name: "jobs__slow_compute",
    arguments: { seconds: 0, label: "owned" },
  });
  expect(created.result?.resultType).toBe("task");
  const handle = created.result!.taskId as string;
  const admin = await token(sub, true);
  await until(
    async () => (await rpc(admin, "tasks/get", { taskId: handle })).result?.status === "completed",
    10_000,
    "the task completed",
  );
  return handle;
}

/** Each route to a tool under `admin`: `true` when a call by it reached the tool. */
const ROUTES: Record<string, (admin: boolean) => Promise<boolean>> = {
  "direct prefixed name": async (admin) =>
    reachedReport(
      await rpc(await token("alice", admin), "tools/call", { name: "alpha__show_report", arguments: {} }),
    ),
  "unprefixed app name (Apps extension declared)": async (admin) =>
    reachedReport(
      await rpc(await token("alice", admin), "tools/call", { name: "show_report", arguments: {} }),
    ),
  "call_tool in search mode": async (admin) =>
    reachedReport(
      await rpc(await token("searcher", admin), "tools/call", {
        name: "call_tool",
        arguments: { name: "alpha__show_report", arguments: {} },
      }),
    ),
  "run_code in code mode": async (admin) => {
    const answer = await rpc(await token("coder", admin), "tools/call", {
      name: "run_code",
      arguments: { code: "return await tools.alpha.show_report({})" },
    });
    // A script gets the tool's structured content.
    return answer.status === 200 && resultText(answer.result).includes('"origin":"alpha"');
  },
  "task-augmented call": async (admin) => {
    const created = await rpc(await token("alice", admin), "tools/call", {
      name: "jobs__slow_compute",
      arguments: { seconds: 0, label: "augmented" },
    });
    return created.status === 200 && created.result?.resultType === "task";
  },
  "task's result read with a token without the scope": async (admin) => {
    const handle = await completedTask("alice");
    const got = await rpc(await token("alice", admin), "tasks/get", { taskId: handle });
    return got.status === 200 && resultText(got.result?.result).includes("computed owned");
  },
};

describe("auth.require follows the resolved target", () => {
  it(
    "refuses every route to a tool under admin to a token without admin, and lets one with it through",
    async () => {
      const rounds = attackSize(1, 5);
      const through: string[] = [];
      for (let round = 0; round < rounds; round++) {
        for (const [route, call] of Object.entries(ROUTES)) {
          if (await call(false)) through.push(route);
          expect(await call(true), `${route} with admin`).toBe(true);
        }
      }
      reportFigure(
        "target scopes",
        `${through.length} of ${rounds * Object.keys(ROUTES).length} probes without admin got through`,
      );
      expect([...new Set(through)]).toEqual([]);
    },
    attackTimeout(60_000, 180_000),
  );

  it("answers the refusal 403 with the scope to sign in again with, on the app name as on the exposed one", async () => {
    const bearer = await token("alice", false);
    for (const name of ["alpha__show_report", "show_report"]) {
      const answer = await rpc(bearer, "tools/call", { name, arguments: {} });
      expect(answer.status, name).toBe(403);
    }
  });

  it("keeps a tool a profile denies, or does not allow, out of reach by the app name too", async () => {
    for (const sub of ["narrow", "jobs-only"]) {
      const bearer = await token(sub, true);
      for (const name of ["alpha__show_report", "show_report"]) {
        const answer = await rpc(bearer, "tools/call", { name, arguments: {} });
        expect(reachedReport(answer), `${sub}: ${name}`).toBe(false);
        expect(answer.error?.message, `${sub}: ${name}`).toMatch(/Unknown tool/);
      }
    }
  });
});
