import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RecordedRequest } from "../../src/testing/mock-llm-server.js";
import { runCli } from "../support/cli.js";
import { startMockLlm } from "../support/mock-llm.js";

// `mcplex chat --tools search|code`: the model sees the meta-tools, not the catalog, and the
// meta-tools reach the real workspace server.

let dir: string;
let config: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "mcplex-chat-modes-"));
  await mkdir(join(dir, "docs"));
  for (let i = 1; i <= 6; i++)
    await writeFile(
      join(dir, "docs", `note${i}.md`),
      i % 2 === 0 ? `Note ${i} is about OAuth.` : `Note ${i}.`,
    );
  config = join(dir, "mcplex.yaml");
  await writeFile(config, `servers:\n  workspace:\n    type: workspace\n    root: ${dir}\n`);
});
afterAll(() => rm(dir, { recursive: true, force: true }));

const toolNames = (request: RecordedRequest) => (request.body.tools ?? []).map((t) => t.function.name);
const lastToolResult = (request: RecordedRequest) =>
  String(request.body.messages.filter((m) => m.role === "tool").at(-1)?.content ?? "");

const chat = (llmUrl: string, mode: string, prompt: string) =>
  runCli(
    ["chat", "--config", config, "--base-url", llmUrl, "--model", "mock", "--tools", mode, "-p", prompt],
    {
      env: { MCPLEX_LLM_API_KEY: "" },
    },
  );

describe("mcplex chat --tools", () => {
  it("search: the model finds a tool, then calls it through call_tool", async () => {
    const llm = await startMockLlm({
      turns: [
        { toolCalls: [{ name: "search_tools", arguments: { query: "read the contents of a text file" } }] },
        (request) => {
          const found = /workspace__\w+/.exec(lastToolResult(request))?.[0] ?? "none";
          return {
            toolCalls: [
              { name: "call_tool", arguments: { name: found, arguments: { path: "docs/note2.md" } } },
            ],
          };
        },
        (request) => ({ text: `The file says: ${lastToolResult(request)}` }),
      ],
    });
    try {
      const { code, stdout, stderr } = await chat(llm.url, "search", "What does note 2 say?");
      expect(code, stderr).toBe(0);
      expect(stdout).toContain("Note 2 is about OAuth.");
      expect(toolNames(llm.requests[0]!)).toEqual(["search_tools", "describe_tools", "call_tool"]);
    } finally {
      await llm.close();
    }
  });

  it("code: one script reads six files and only its answer goes back to the model", async () => {
    const script = `
      const { entries } = await tools.workspace.list_directory({ path: "docs" });
      const hits = [];
      for (const e of entries) {
        const { content } = await tools.workspace.read_file({ path: "docs/" + e.name });
        if (content.includes("OAuth")) hits.push(e.name);
      }
      return hits.sort();`;
    const llm = await startMockLlm({
      turns: [
        { toolCalls: [{ name: "run_code", arguments: { code: script } }] },
        (request) => ({ text: `Files about OAuth: ${lastToolResult(request)}` }),
      ],
    });
    try {
      const { code, stdout, stderr } = await chat(llm.url, "code", "Which notes mention OAuth?");
      expect(code, stderr).toBe(0);
      expect(stdout).toContain('["note2.md","note4.md","note6.md"]');
      expect(llm.requests).toHaveLength(2);
      expect(toolNames(llm.requests[0]!)).toEqual(["search_tools", "describe_tools", "run_code"]);
      // The files' text never went to the model, only the script's answer.
      expect(JSON.stringify(llm.requests[1]!.body.messages)).not.toContain("Note 1.");
    } finally {
      await llm.close();
    }
  });

  it("refuses a mode that does not exist", async () => {
    const { code, stderr } = await runCli(["chat", "--config", config, "--tools", "some", "-p", "hi"]);
    expect(code).toBe(2);
    expect(stderr).toContain("--tools must be all, search or code");
  });
});

describe("mcplex chat --tools with policies", () => {
  it("search: a tool a rule denies whatever the arguments is in no search result", async () => {
    const file = join(dir, "denied.yaml");
    await writeFile(
      file,
      `servers:\n  workspace:\n    type: workspace\n    root: ${dir}\n` +
        `policies:\n  - name: no-reading\n    when: 'request.tool == "workspace__read_file"'\n    effect: deny\n`,
    );
    const llm = await startMockLlm({
      turns: [
        { toolCalls: [{ name: "search_tools", arguments: { query: "read the contents of a text file" } }] },
        (request) => ({ text: lastToolResult(request) }),
      ],
    });
    try {
      const { code, stdout, stderr } = await runCli(
        [
          "chat",
          "--config",
          file,
          "--base-url",
          llm.url,
          "--model",
          "mock",
          "--tools",
          "search",
          "-p",
          "Read.",
        ],
        { env: { MCPLEX_LLM_API_KEY: "" } },
      );
      expect(code, stderr).toBe(0);
      expect(stdout).toContain("workspace__");
      expect(stdout).not.toContain("workspace__read_file");
    } finally {
      await llm.close();
    }
  });
});
