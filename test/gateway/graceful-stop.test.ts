import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { COMMANDS, resultText, serveHttp, yamlConfig } from "../support/gateway.js";

let dir: string;
let config: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "mcplex-graceful-"));
  config = join(dir, "mcplex.yaml");
  await writeFile(config, yamlConfig({ fx: COMMANDS.fixture }));
});
afterAll(() => rm(dir, { recursive: true, force: true }));

describe("mcplex serve --http on SIGTERM", () => {
  it.each(["legacy", "auto"] as const)(
    "lets a call in flight finish before it exits (%s client)",
    async (mode) => {
      const gw = await serveHttp(["--config", config]);
      const client = new Client({ name: "graceful", version: "1" }, { versionNegotiation: { mode } });
      await client.connect(new StreamableHTTPClientTransport(new URL(gw.url)));
      let progressed: () => void = () => {};
      const inFlight = new Promise<void>((resolve) => {
        progressed = resolve;
      });
      const call = client.callTool(
        { name: "fx__slow", arguments: { ms: 1500, step: 100 } },
        { onprogress: () => progressed() },
      );
      await inFlight;
      const exited = gw.stop("SIGTERM");
      expect(resultText(await call)).toBe("slept 1500");
      expect((await exited).code).toBe(0);
      await client.close().catch(() => {});
    },
  );
});
