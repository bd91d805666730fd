import { spawn } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { createInterface } from "node:readline";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CLI } from "../support/cli.js";

/**
 * A 2025 client that initializes the moment `mcplex serve --stdio` starts (as a desktop client
 * does) is told the extensions the servers declare: the gateway's answer waits for the first
 * start, as a first list does. The skills fixture takes a process start to declare them.
 */
let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "mcplex-ext-init-"));
  await writeFile(
    join(dir, "mcplex.yaml"),
    `servers:\n  alpha:\n    command: ${process.execPath}\n    args: [${resolve("test/fixtures/servers/skills-server.mjs")}, --origin, alpha, --legacy]\n`,
  );
});
afterAll(() => rm(dir, { recursive: true, force: true }));

describe("a 2025 client initializing as the gateway starts", () => {
  it("is told the skills and apps extensions its servers declare", async () => {
    const child = spawn(process.execPath, [CLI, "serve", "--stdio", "--config", join(dir, "mcplex.yaml")], {
      stdio: ["pipe", "pipe", "ignore"],
    });
    try {
      child.stdin.write(
        `${JSON.stringify({
          jsonrpc: "2.0",
          id: 1,
          method: "initialize",
          params: {
            protocolVersion: "2025-11-25",
            capabilities: {},
            clientInfo: { name: "t", version: "1" },
          },
        })}\n`,
      );
      const [line] = await new Promise<string[]>((done) =>
        createInterface({ input: child.stdout }).once("line", (l) => done([l])),
      );
      const answer = JSON.parse(line!) as {
        result: { capabilities: { extensions?: Record<string, unknown> } };
      };
      expect(answer.result.capabilities.extensions).toEqual({
        "io.modelcontextprotocol/skills": { directoryRead: true },
        "io.modelcontextprotocol/ui": {},
      });
    } finally {
      child.stdin.end();
      child.kill();
    }
  });
});
