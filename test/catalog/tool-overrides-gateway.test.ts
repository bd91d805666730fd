/**
 * `overrides:` end to end: `serve()` over HTTP (what `mcplex serve --http` runs) with the
 * built-in workspace server, the SDK client as the caller, and the files on disk as the proof
 * of what reached the server. A server's overrides for everyone; a profile's on top for the
 * callers of its token; search and code mode reading the same overridden entries.
 */
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Client } from "@modelcontextprotocol/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningGateway, serve } from "../../src/assembly/serve.js";
import { DECLARATIONS_URI } from "../../src/catalog-modes/catalog-view.js";
import { parseConfig } from "../../src/config/parse-config.js";
import { connectHttp, resultText } from "../support/gateway.js";

const TOKENS = {
  all: "all-token-0123456789abcdef",
  readers: "readers-token-0123456789ab",
  search: "search-token-0123456789abc",
  code: "code-token-0123456789abcde",
};
let running: RunningGateway;
let url: string;
let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "mcplex-overrides-"));
  await writeFile(join(dir, "notes.md"), "first note\n");
  const text = `servers:
  ws:
    type: workspace
    root: ${JSON.stringify(dir)}
    allowWrite: true
    overrides:
      write_file:
        name: save_note
        description: { append: "Always writes notes.md." }
        annotations: { idempotentHint: true }
        arguments: { path: { value: notes.md } }
      read_file:
        arguments: { path: { default: notes.md } }
profiles:
  readers:
    tools: { allow: ["ws__read_file", "ws__list_directory"] }
    overrides:
      ws__read_file: { name: read_notes, title: Read the notes }
tokens:
  - { token: ${TOKENS.all} }
  - { token: ${TOKENS.readers}, profile: readers }
  - { token: ${TOKENS.search}, mode: search }
  - { token: ${TOKENS.code}, mode: code }
`;
  const config = parseConfig(text, { source: "overrides.yaml", env: {} });
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

describe("tool overrides through serve --http with the SDK client", () => {
  it("lists a renamed tool with its new description, annotations and a schema without the fixed argument", async () => {
    await withClient(TOKENS.all, async (client) => {
      const { tools } = await client.listTools();
      const names = tools.map((t) => t.name);
      expect(names).toContain("ws__save_note");
      expect(names).not.toContain("ws__write_file");
      const save = tools.find((t) => t.name === "ws__save_note")!;
      expect(save.description).toMatch(/\n\nAlways writes notes\.md\.$/);
      expect(save.annotations?.idempotentHint).toBe(true);
      expect(Object.keys(save.inputSchema.properties ?? {})).toEqual(["content", "createParents"]);
      expect(save.inputSchema.required).toEqual(["content"]);
      const read = tools.find((t) => t.name === "ws__read_file")!;
      expect(read.inputSchema.properties?.path).toMatchObject({ type: "string", default: "notes.md" });
      expect(read.inputSchema.required ?? []).not.toContain("path");
    });
  });

  it("sends the fixed value whatever the caller gives, and the default when it gives none", async () => {
    await withClient(TOKENS.all, async (client) => {
      const saved = await client.callTool({ name: "ws__save_note", arguments: { content: "saved\n" } });
      expect(saved.isError, text(saved)).not.toBe(true);
      expect(await readFile(join(dir, "notes.md"), "utf8")).toBe("saved\n");
      // A caller that names the hidden argument anyway does not move the write.
      const sneaky = await client.callTool({
        name: "ws__save_note",
        arguments: { content: "again\n", path: "elsewhere.md" },
      });
      expect(sneaky.isError, text(sneaky)).not.toBe(true);
      expect(await readFile(join(dir, "notes.md"), "utf8")).toBe("again\n");
      await expect(readFile(join(dir, "elsewhere.md"), "utf8")).rejects.toThrow(/ENOENT/);
      expect(text(await client.callTool({ name: "ws__read_file", arguments: {} }))).toContain("again");
      // The old name is gone, as an unknown tool is.
      const old = await client
        .callTool({ name: "ws__write_file", arguments: { path: "x.md", content: "x" } })
        .then(
          (result) => text(result),
          (error: Error) => error.message,
        );
      expect(old).toMatch(/ws__write_file/);
      await expect(readFile(join(dir, "x.md"), "utf8")).rejects.toThrow(/ENOENT/);
    });
  });

  it("applies a profile's overrides on top for its callers only", async () => {
    await withClient(TOKENS.readers, async (client) => {
      const { tools } = await client.listTools();
      expect(tools.map((t) => t.name).sort()).toEqual(["read_notes", "ws__list_directory"]);
      expect(tools.find((t) => t.name === "read_notes")!.title).toBe("Read the notes");
      // The server's default still applies under the profile's name.
      expect(text(await client.callTool({ name: "read_notes", arguments: {} }))).toContain("again");
      const old = await client.callTool({ name: "ws__read_file", arguments: {} }).then(
        (result) => text(result),
        (error: Error) => error.message,
      );
      expect(old).toMatch(/ws__read_file/);
    });
  });

  it("search mode finds the tool by its new name and description", async () => {
    await withClient(TOKENS.search, async (client) => {
      const found = text(await client.callTool({ name: "search_tools", arguments: { query: "notes.md" } }));
      expect(found).toContain("ws__save_note");
      expect(found).not.toContain("ws__write_file");
      const described = text(
        await client.callTool({ name: "describe_tools", arguments: { names: ["ws__save_note"] } }),
      );
      const [entry] = JSON.parse(described) as { description: string; inputSchema: { properties: object } }[];
      expect(entry!.description).toMatch(/Always writes notes\.md\.$/);
      expect(Object.keys(entry!.inputSchema.properties)).not.toContain("path");
    });
  });

  it("code mode declares and calls the tool under its new name, without the fixed argument", async () => {
    await withClient(TOKENS.code, async (client) => {
      const declared = await client.readResource({ uri: DECLARATIONS_URI });
      const declarations = (declared.contents[0] as { text: string }).text;
      expect(declarations).toContain("save_note");
      expect(declarations).not.toContain("write_file");
      const ran = await client.callTool({
        name: "run_code",
        arguments: { code: 'await tools.ws.save_note({ content: "from code\\n" }); return "ok";' },
      });
      expect(text(ran), text(ran)).toContain("ok");
      expect(await readFile(join(dir, "notes.md"), "utf8")).toBe("from code\n");
    });
  });
});
