import { spawn } from "node:child_process";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CLI } from "../support/cli.js";

// The MCP Inspector's CLI mode (`@modelcontextprotocol/inspector-cli`, built on the v1 SDK,
// so it speaks 2025) as an independent client of `mcplex workspace --root DIR` over stdio.
const INSPECTOR = resolve("node_modules/.bin/mcp-inspector-cli");

let base: string;
let work: string;
let root: string;

function inspector(args: string[]): Promise<Record<string, unknown>> {
  return new Promise((done, fail) => {
    const child = spawn(
      process.execPath,
      [INSPECTOR, "--cli", process.execPath, CLI, "workspace", "--root", root, ...args],
      { cwd: work, stdio: ["ignore", "pipe", "pipe"] },
    );
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (d: string) => (stdout += d));
    child.stderr.setEncoding("utf8").on("data", (d: string) => (stderr += d));
    child.on("error", fail);
    child.on("close", (code) => {
      if (code !== 0) return fail(new Error(`inspector exited with ${code}:\n${stderr}\n${stdout}`));
      try {
        done(JSON.parse(stdout) as Record<string, unknown>);
      } catch {
        fail(new Error(`inspector printed no JSON:\n${stdout}\n${stderr}`));
      }
    });
  });
}

beforeAll(async () => {
  base = await mkdtemp(join(tmpdir(), "mcplex-ws-inspector-"));
  // inspector-cli 1.0.3 reads `../package.json` relative to its working directory.
  await writeFile(join(base, "package.json"), "{}\n");
  work = join(base, "work");
  root = join(base, "root");
  await mkdir(work);
  await mkdir(join(root, "docs"), { recursive: true });
  await writeFile(join(root, "docs", "guide.md"), "# Guide\nThe needle is here.\n");
});
afterAll(() => rm(base, { recursive: true, force: true }));

describe("the MCP Inspector CLI against mcplex workspace over stdio", () => {
  it("lists the tools and calls read_file, list_directory and search_files", async () => {
    const tools = (await inspector(["--method", "tools/list"])).tools as Array<{ name: string }>;
    expect(tools.map((t) => t.name).sort()).toEqual(["list_directory", "read_file", "search_files"]);
    const call = (tool: string, arg: string) =>
      inspector(["--method", "tools/call", "--tool-name", tool, "--tool-arg", arg]);
    expect(JSON.stringify(await call("read_file", "path=docs/guide.md"))).toContain("The needle is here.");
    expect(JSON.stringify(await call("list_directory", "path=docs"))).toContain("guide.md");
    const found = await call("search_files", "query=needle");
    expect(JSON.stringify(found)).toContain("docs/guide.md");
  });

  it("lists and reads the files as resources", async () => {
    const resources = (await inspector(["--method", "resources/list"])).resources as Array<{ uri: string }>;
    const guide = resources.find((r) => r.uri.endsWith("/docs/guide.md"));
    expect(guide).toBeDefined();
    const read = await inspector(["--method", "resources/read", "--uri", guide!.uri]);
    expect(JSON.stringify(read)).toContain("The needle is here.");
  });

  it("lists the prompts and gets one", async () => {
    const prompts = (await inspector(["--method", "prompts/list"])).prompts as Array<{ name: string }>;
    expect(prompts.map((p) => p.name)).toContain("summarize_file");
    const prompt = await inspector([
      "--method",
      "prompts/get",
      "--prompt-name",
      "summarize_file",
      "--prompt-args",
      "path=docs/guide.md",
    ]);
    expect(JSON.stringify(prompt)).toContain("guide.md");
  });
});
