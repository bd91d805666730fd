import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runDoctor } from "../../src/cli/doctor.js";
import { configOf, stdio } from "../support/config.js";
import { connectHttp, type InProcessGateway, rawHttp, resultText, startGateway } from "../support/gateway.js";

// Servers built on older SDKs (server-github among them) speak only 2024-11-05: the hub
// takes them, and the gateway serves their tools to 2025 and 2026 clients alike.

const REV2024 = resolve("test/fixtures/servers/rev2024-server.mjs");

let gw: InProcessGateway;
beforeAll(async () => {
  gw = await startGateway(configOf([stdio("old", process.execPath, [REV2024])]));
});
afterAll(async () => {
  await gw?.stop();
});

const connect = (mode: "legacy" | "auto") => connectHttp(gw.url, { mode, name: "rev2024-test" });

describe("a 2024-11-05 upstream", () => {
  it("is ready in the hub with the revision it answered", () => {
    const status = gw.hub.servers().find((s) => s.name === "old");
    expect(status?.error).toBeUndefined();
    expect(status?.state).toBe("ready");
    expect(status?.protocolVersion).toBe("2024-11-05");
  });

  for (const mode of ["legacy", "auto"] as const) {
    it(`serves its tools to a ${mode === "legacy" ? "2025" : "2026"} client through the gateway`, async () => {
      const client = await connect(mode);
      try {
        const { tools } = await client.listTools();
        expect(tools.map((t) => t.name)).toContain("old__echo");
        const result = await client.callTool({ name: "old__echo", arguments: { text: "hi" } });
        expect(resultText(result)).toBe("echo: hi");
        expect(result.structuredContent).toBeUndefined();
      } finally {
        await client.close();
      }
    });
  }

  it("answers a gateway client that asks for 2024-11-05 with 2024-11-05", async () => {
    const res = await rawHttp(gw.url, {
      headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
      body: {
        jsonrpc: "2.0",
        id: 1,
        method: "initialize",
        params: {
          protocolVersion: "2024-11-05",
          capabilities: {},
          clientInfo: { name: "old", version: "1" },
        },
      },
    });
    const body = res.body.includes("data:") ? JSON.parse(/data: (.*)/.exec(res.body)![1]!) : res.json;
    expect(body.result.protocolVersion).toBe("2024-11-05");
  });
});

describe("an upstream answering a revision nobody speaks", () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "mcplex-rev-"));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it("fails with a hint about the revision, not about running its command by hand", async () => {
    const config = join(dir, "mcplex.yaml");
    await writeFile(
      config,
      [
        "servers:",
        "  odd:",
        `    command: ${JSON.stringify(process.execPath)}`,
        `    args: [${JSON.stringify(REV2024)}, --answer-version, "1999-01-01"]`,
        "",
      ].join("\n"),
    );
    const checks = await runDoctor({ config, env: { PATH: process.env.PATH ?? "" } });
    const check = checks.find((c) => c.area === "server" && c.server === "odd");
    expect(check?.status).toBe("fail");
    expect(check?.message).toContain("1999-01-01");
    expect(check?.hint).toBeDefined();
    expect(check?.hint).not.toMatch(/by hand/i);
    expect(check?.hint).toContain("2024-11-05");
  });
});
