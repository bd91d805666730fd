import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Client } from "@modelcontextprotocol/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { viewEngines } from "../../src/catalog-modes/view-engines.js";
import { viewResolver } from "../../src/catalog-modes/view-resolver.js";
import type { CallRequest, Interceptor } from "../../src/hub/call-pipeline.js";
import { configOf, EVERYTHING, fixture, stdio } from "../support/config.js";
import {
  connectHttp,
  eventually,
  type InProcessGateway,
  resultText,
  startGateway,
} from "../support/gateway.js";

// Code mode through the gateway: a script's tool calls are tools/call requests of the caller,
// run through the same pipeline (profile, interceptors) as direct calls; cancelling run_code
// cancels them at the server; a failing script is a tool error the model can read.

const TOKENS = { coder: "coder-token-0123456789", narrow: "narrow-token-012345678" };
let gw: InProcessGateway;
let dir: string;
const seen: CallRequest[] = [];
/** Resolvers waiting for a call whose arguments carry a given tag. */
const tagged = new Map<string, () => void>();
const audit: Interceptor = (next) => async (request) => {
  seen.push(request);
  const tag = (request.params.arguments as { tag?: unknown } | undefined)?.tag;
  if (typeof tag === "string") tagged.get(tag)?.();
  return next(request);
};
const callTagged = (tag: string) => new Promise<void>((resolve) => tagged.set(tag, resolve));

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "mcplex-code-"));
  const config = configOf(
    [
      fixture("fx", [], { env: { FIXTURE_LOG: join(dir, "fx.log") } }),
      stdio("everything", EVERYTHING, ["stdio"]),
    ],
    {
      profiles: { narrow: { servers: ["fx"], tools: {} } },
      tokens: [
        { token: TOKENS.coder, mode: "code" },
        { token: TOKENS.narrow, profile: "narrow", mode: "code" },
      ],
    },
  );
  gw = await startGateway(
    config,
    {},
    {
      interceptors: [audit],
      views: viewResolver(
        { profiles: config.profiles },
        viewEngines({ codeLimits: { wallMs: 3000, maxToolCalls: 5 } }),
      ),
    },
  );
}, 60_000);

afterAll(async () => {
  await gw?.stop();
  rmSync(dir, { recursive: true, force: true });
});

const connect = (token: string) => connectHttp(gw.url, { token, name: "code-test" });

const run = (client: Client, code: string, options: { signal?: AbortSignal } = {}) =>
  client.callTool({ name: "run_code", arguments: { code } }, options);

describe("code mode through the gateway", () => {
  it("lists run_code and describes tools as TypeScript declarations", async () => {
    const client = await connect(TOKENS.coder);
    try {
      const names = (await client.listTools()).tools.map((t) => t.name);
      expect(names).toEqual(["search_tools", "describe_tools", "run_code"]);
      const declared = resultText(
        await client.callTool({ name: "describe_tools", arguments: { names: ["everything__get-sum"] } }),
      );
      expect(declared).toMatch(/everything/);
      expect(declared).toMatch(/get_sum\(/);
      expect(declared).toMatch(/a: number/);
    } finally {
      await client.close();
    }
  });

  it("serves the declarations as a resource too", async () => {
    const client = await connect(TOKENS.coder);
    try {
      const { resources } = await client.listResources();
      expect(resources.map((r) => r.uri)).toContain("mcplex://code-mode/tools.d.ts");
      const read = await client.readResource({ uri: "mcplex://code-mode/tools.d.ts" });
      const text = (read.contents[0] as { text: string }).text;
      expect(text).toMatch(/get_sum\(/);
      expect(text).toMatch(/echo\(/);
    } finally {
      await client.close();
    }
  });

  it("runs a script whose tool calls go through the pipeline as the caller's own calls", async () => {
    const client = await connect(TOKENS.coder);
    try {
      seen.length = 0;
      const result = await run(
        client,
        `const sums = await Promise.all([1, 2, 3].map((n) => tools.everything.get_sum({ a: n, b: 10 })));
         const echoed = await tools.fx.echo({ message: "from a script" });
         console.log("echo said", echoed);
         return sums.map((s) => String(s).match(/\\d+/g)?.pop());`,
      );
      expect(result.isError).toBeFalsy();
      const text = resultText(result);
      expect(text).toContain("echo said echo: from a script");
      expect(text).toContain('["11","12","13"]');
      const inner = seen.filter(
        (r) => r.method === "tools/call" && r.target?.kind === "tool" && r.target.server,
      );
      expect(inner.map((r) => (r.target as { name: string }).name).sort()).toEqual([
        "everything__get-sum",
        "everything__get-sum",
        "everything__get-sum",
        "fx__echo",
      ]);
    } finally {
      await client.close();
    }
  });

  it("gives a script only the caller's tools", async () => {
    const client = await connect(TOKENS.narrow);
    try {
      const result = await run(client, "return await tools.everything.get_sum({ a: 1, b: 2 })");
      expect(result.isError).toBe(true);
      expect(resultText(result)).toMatch(/CODE_ERROR/);
      const own = await run(client, 'return await tools.fx.echo({ message: "mine" })');
      expect(resultText(own)).toContain("echo: mine");
    } finally {
      await client.close();
    }
  });

  it("answers a failing script with a tool error that names the limit and keeps its output", async () => {
    const client = await connect(TOKENS.coder);
    try {
      const loop = await run(client, 'console.log("before"); while (true) {}');
      expect(loop.isError).toBe(true);
      expect(resultText(loop)).toMatch(/CODE_TIMEOUT/);
      expect(resultText(loop)).toContain("before");
      const many = await run(
        client,
        'for (let i = 0; i < 10; i++) await tools.fx.echo({ message: "x" + i })',
      );
      expect(resultText(many)).toMatch(/CODE_TOO_MANY_CALLS/);
      const syntax = await run(client, "return (");
      expect(resultText(syntax)).toMatch(/CODE_SYNTAX/);
      // The gateway goes on serving.
      expect(resultText(await run(client, "return 6 * 7"))).toContain("42");
    } finally {
      await client.close();
    }
  });

  it("cancels the script's calls at the server when run_code is cancelled", async () => {
    const client = await connect(TOKENS.coder);
    try {
      const controller = new AbortController();
      const started = callTagged("in-script");
      const call = run(client, 'await tools.fx.slow({ ms: 20000, step: 50, tag: "in-script" })', {
        signal: controller.signal,
      });
      await started;
      controller.abort();
      await expect(call).rejects.toThrow();
      // The server records the cancellation in its log file: nothing to wait on but the file.
      await eventually(async () =>
        readFileSync(join(dir, "fx.log"), "utf8").includes("cancelled in-script") ? true : undefined,
      );
    } finally {
      await client.close();
    }
  });
});
