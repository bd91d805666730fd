/**
 * `composites:` end to end: `serve()` over HTTP with the built-in workspace server, the SDK
 * client as the caller. A composite is listed and called like any tool; its script's calls are
 * the caller's own: its profile bounds them, a policy refuses them, the audit trail has a line
 * for each; a failure names the composite and the inner tool.
 */
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Client } from "@modelcontextprotocol/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningGateway, serve } from "../../src/assembly/serve.js";
import { parseConfig } from "../../src/config/parse-config.js";
import { connectHttp, resultText } from "../support/gateway.js";
import { until } from "../support/wait.js";

const ALL = "all-token-0123456789abcdefgh";
const READERS = "readers-token-0123456789abc";
let running: RunningGateway;
let url: string;
let dir: string;
let auditFile: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "mcplex-composites-"));
  auditFile = join(dir, "audit.jsonl");
  await writeFile(join(dir, "notes.md"), "first line\nsecond line\n");
  const text = `servers:
  ws:
    type: workspace
    root: ${JSON.stringify(dir)}
    allowWrite: true
composites:
  note_summary:
    title: Note summary
    description: Reads a note and counts its lines.
    inputSchema: { type: object, properties: { path: { type: string } }, required: [path] }
    outputSchema: { type: object, properties: { lines: { type: number }, first: { type: string } } }
    script: |
      const file = await tools.ws.read_file({ path: args.path });
      const lines = file.content.split("\\n").filter((line) => line !== "");
      return { lines: lines.length, first: lines[0] };
  write_twice:
    description: Writes ok.md, then secret.md.
    inputSchema: { type: object }
    script: |
      await tools.ws.write_file({ path: "ok.md", content: "ok" });
      await tools.ws.write_file({ path: "secret.md", content: "x" });
      return "done";
policies:
  - name: no-secret-files
    when: 'request.tool == "ws__write_file" && request.arguments.path.contains("secret")'
    effect: deny
    message: no secret files
profiles:
  readers:
    tools: { allow: ["ws__read_file", "note_summary", "write_twice"] }
tokens:
  - { token: ${ALL} }
  - { token: ${READERS}, profile: readers }
audit:
  to: ${JSON.stringify(auditFile)}
`;
  const config = parseConfig(text, { source: "composites.yaml", env: {} });
  running = await serve({ config, transport: "http", http: { host: "127.0.0.1", port: 0 }, watch: false });
  await running.started;
  url = running.http!.url;
}, 60_000);

afterAll(async () => {
  await running?.close();
  if (dir !== undefined) await rm(dir, { recursive: true, force: true });
});

async function withClient<T>(token: string, use: (client: Client) => Promise<T>): Promise<T> {
  const client = await connectHttp(url, { token });
  try {
    return await use(client);
  } finally {
    await client.close();
  }
}
const text = resultText;

describe("composite tools through serve --http with the SDK client", () => {
  it("lists a composite like any tool and runs its script over the caller's tools", async () => {
    await withClient(ALL, async (client) => {
      const { tools } = await client.listTools();
      const summary = tools.find((t) => t.name === "note_summary")!;
      expect(summary).toMatchObject({
        title: "Note summary",
        description: "Reads a note and counts its lines.",
      });
      expect(summary.inputSchema.required).toEqual(["path"]);
      const result = await client.callTool({ name: "note_summary", arguments: { path: "notes.md" } });
      expect(result.isError, text(result)).not.toBe(true);
      expect(result.structuredContent).toEqual({ lines: 2, first: "first line" });
      expect(JSON.parse(text(result))).toEqual({ lines: 2, first: "first line" });
    });
  });

  it("runs each inner call as the caller's: a policy refuses one, the error names the composite and the tool", async () => {
    await withClient(ALL, async (client) => {
      const result = await client.callTool({ name: "write_twice", arguments: {} });
      expect(result.isError).toBe(true);
      expect(text(result)).toMatch(
        /^composite tool "write_twice" failed \(its call of ws__write_file failed: .*no secret files.*\): CODE_ERROR: /,
      );
    });
    expect(await readFile(join(dir, "ok.md"), "utf8")).toBe("ok");
    await expect(readFile(join(dir, "secret.md"), "utf8")).rejects.toThrow(/ENOENT/);
    // The audit trail has the composite's call and each inner call, each with its decisions.
    await until(
      async () => (await readFile(auditFile, "utf8").catch(() => "")).includes("no-secret-files"),
      10_000,
      "the audit line of the refused inner call",
    );
    const lines = (await readFile(auditFile, "utf8"))
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as { target?: string; decisions?: { name: string; effect: string }[] });
    expect(lines.filter((l) => l.target === "write_twice")).toHaveLength(1);
    const writes = lines.filter((l) => l.target === "ws__write_file");
    expect(writes).toHaveLength(2);
    expect(writes[1]!.decisions).toMatchObject([{ name: "no-secret-files", effect: "deny" }]);
  });

  it("bounds a script by its caller's profile: a tool the profile does not reach is not in its tools", async () => {
    await withClient(READERS, async (client) => {
      const names = (await client.listTools()).tools.map((t) => t.name).sort();
      expect(names).toEqual(["note_summary", "write_twice", "ws__read_file"]);
      const summary = await client.callTool({ name: "note_summary", arguments: { path: "notes.md" } });
      expect(summary.structuredContent).toEqual({ lines: 2, first: "first line" });
      const write = await client.callTool({ name: "write_twice", arguments: {} });
      expect(write.isError).toBe(true);
      expect(text(write)).toMatch(/^composite tool "write_twice" failed: CODE_ERROR: .*write_file/);
    });
  });
});
