import { spawn } from "node:child_process";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CLI } from "../support/cli.js";
import { COMMANDS, resultText, type ServeProcess, serveHttp, yamlConfig } from "../support/gateway.js";

// The MCP Inspector's CLI mode (`@modelcontextprotocol/inspector-cli`, built on the v1 SDK) as an
// independent client of the gateway, over `mcplex serve --stdio` and `--http`. Needs the
// devDependency; MCP_INSPECTOR_CLI may point at another install of its bin.

const INSPECTOR = process.env.MCP_INSPECTOR_CLI ?? resolve("node_modules/.bin/mcp-inspector-cli");

let root: string;
let work: string;

/** Runs the inspector CLI in `work`; resolves with its parsed stdout. */
function inspector(args: string[]): Promise<unknown> {
  return new Promise((done, fail) => {
    const child = spawn(process.execPath, [INSPECTOR, "--cli", ...args], {
      cwd: work,
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (d: string) => (stdout += d));
    child.stderr.setEncoding("utf8").on("data", (d: string) => (stderr += d));
    const timer = setTimeout(() => child.kill("SIGKILL"), 30_000);
    child.on("error", fail);
    child.on("close", (code) => {
      clearTimeout(timer);
      if (code !== 0) return fail(new Error(`inspector exited with ${code}:\n${stderr}\n${stdout}`));
      try {
        done(JSON.parse(stdout));
      } catch {
        fail(new Error(`inspector printed no JSON:\n${stdout}\n${stderr}`));
      }
    });
  });
}

describe("the MCP Inspector CLI as a client of the gateway", () => {
  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), "mcplex-gw-inspector-"));
    // inspector-cli 1.0.3 finds its own package.json through `../package.json` checked against
    // the working directory (but imported relative to itself): give the cwd a parent that has one.
    await writeFile(join(root, "package.json"), "{}\n");
    work = join(root, "work");
    await mkdir(work);
    // mcplex finds mcplex.yaml in its cwd, so the inspector's own --config option stays out of the way.
    await writeFile(join(work, "mcplex.yaml"), yamlConfig({ everything: COMMANDS.everything }));
  });
  afterAll(() => rm(root, { recursive: true, force: true }));

  describe("over mcplex serve --stdio", () => {
    const target = [process.execPath, CLI, "serve", "--stdio"];

    it("lists the tools of server-everything", async () => {
      const listed = (await inspector([...target, "--method", "tools/list"])) as {
        tools: Array<{ name: string }>;
      };
      expect(listed.tools.map((t) => t.name)).toContain("everything__echo");
    });

    it("calls a tool of server-everything", async () => {
      const result = await inspector([
        ...target,
        "--method",
        "tools/call",
        "--tool-name",
        "everything__echo",
        "--tool-arg",
        "message=inspected",
      ]);
      expect(resultText(result)).toBe("Echo: inspected");
    });
  });

  describe("over mcplex serve --http", () => {
    let gw: ServeProcess;
    beforeAll(async () => {
      gw = await serveHttp(["--config", join(work, "mcplex.yaml")]);
    });
    afterAll(() => gw?.stop());

    it("lists and calls tools of server-everything", async () => {
      const listed = (await inspector([gw.url, "--transport", "http", "--method", "tools/list"])) as {
        tools: Array<{ name: string }>;
      };
      expect(listed.tools.map((t) => t.name)).toContain("everything__echo");
      const result = await inspector([
        gw.url,
        "--transport",
        "http",
        "--method",
        "tools/call",
        "--tool-name",
        "everything__echo",
        "--tool-arg",
        "message=over http",
      ]);
      expect(resultText(result)).toBe("Echo: over http");
    });

    // Configs that still say `sse` point at /sse, or at /mcp itself.
    for (const path of ["/sse", "/mcp"]) {
      it(`lists and calls tools with --transport sse at ${path}`, async () => {
        const url = `${gw.origin}${path}`;
        const listed = (await inspector([url, "--transport", "sse", "--method", "tools/list"])) as {
          tools: Array<{ name: string }>;
        };
        expect(listed.tools.map((t) => t.name)).toContain("everything__echo");
        const result = await inspector([
          url,
          "--transport",
          "sse",
          "--method",
          "tools/call",
          "--tool-name",
          "everything__echo",
          "--tool-arg",
          "message=over sse",
        ]);
        expect(resultText(result)).toBe("Echo: over sse");
      });
    }
  });
});
