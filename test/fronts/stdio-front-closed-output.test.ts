import { spawn } from "node:child_process";
import { once } from "node:events";
import { describe, expect, it } from "vitest";
import { CLI } from "../support/cli.js";

// A client that closes its end of the gateway's stdout (it stopped reading, or died half-way)
// leaves the gateway writing into a broken pipe: that is the client gone, not a crash.

describe("mcplex serve --stdio when its client closes the gateway's output", () => {
  it("ends like at the end of input, with exit code 0 and no unhandled EPIPE", async () => {
    const child = spawn(process.execPath, [CLI, "serve", "--stdio"], { stdio: ["pipe", "pipe", "pipe"] });
    let stderr = "";
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
    const exited = once(child, "exit") as Promise<[number | null, NodeJS.Signals | null]>;
    const send = (message: object) => child.stdin.write(`${JSON.stringify(message)}\n`);
    send({
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "gone", version: "1" } },
    });
    await once(child.stdout, "data");
    child.stdout.destroy();
    // Answers now go into a pipe nobody reads; stdin stays open, so only the broken output can end it.
    for (let id = 2; id < 50; id++) send({ jsonrpc: "2.0", id, method: "tools/list", params: {} });
    const [code, signal] = await exited;
    expect(stderr).not.toMatch(/EPIPE|Unhandled/);
    expect({ code, signal }).toEqual({ code: 0, signal: null });
  });
});
