import { spawn } from "node:child_process";
import { once } from "node:events";
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { CLI } from "../support/cli.js";

// The stdio front reads a pipe below Node's streams and writes one directly; a file as standard
// input or output is read and written as a stream, as before.

describe("mcplex serve --stdio with files for standard input and output", () => {
  it("answers every request of the file and writes the answers to the other", async () => {
    const dir = mkdtempSync(join(tmpdir(), "mcplex-stdio-files-"));
    try {
      const requests = [
        {
          jsonrpc: "2.0",
          id: 1,
          method: "initialize",
          params: {
            protocolVersion: "2025-06-18",
            capabilities: {},
            clientInfo: { name: "f", version: "1" },
          },
        },
        { jsonrpc: "2.0", method: "notifications/initialized" },
        { jsonrpc: "2.0", id: 2, method: "tools/list", params: {} },
        { jsonrpc: "2.0", id: 3, method: "ping" },
      ];
      writeFileSync(join(dir, "in.jsonl"), requests.map((r) => `${JSON.stringify(r)}\n`).join(""));
      const input = openSync(join(dir, "in.jsonl"), "r");
      const output = openSync(join(dir, "out.jsonl"), "w");
      const child = spawn(process.execPath, [CLI, "serve", "--stdio"], { stdio: [input, output, "ignore"] });
      closeSync(input);
      closeSync(output);
      const [code] = (await once(child, "exit")) as [number | null];
      expect(code).toBe(0);
      const messages = readFileSync(join(dir, "out.jsonl"), "utf8")
        .trim()
        .split("\n")
        .map(
          (line) => JSON.parse(line) as { id?: number; method?: string; result?: Record<string, unknown> },
        );
      // The servers' start may announce lists (`list_changed`), never before `initialize`'s answer.
      expect(messages[0]?.id).toBe(1);
      const answers = messages.filter((m) => m.id !== undefined);
      expect(answers.map((a) => a.id).sort()).toEqual([1, 2, 3]);
      expect(answers.find((a) => a.id === 2)?.result).toHaveProperty("tools");
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
