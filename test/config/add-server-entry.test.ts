import { mkdtemp, readFile, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { addServerEntry } from "../../src/config/add-server-entry.js";
import { parseDocument } from "../../src/config/parse-document.js";

/** One server added to config files of each shape, everything else in them kept. */
let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "mcplex-add-entry-"));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const ENTRY = { command: "npx", args: ["-y", "pkg@1.0.0"], env: { KEY: "${secret:new.KEY}" } };

async function added(name: string, text: string | undefined): Promise<{ text: string; data: any }> {
  const file = join(dir, name);
  if (text !== undefined) await writeFile(file, text, { mode: 0o600 });
  await addServerEntry(file, "new", ENTRY, { comment: "from the registry" });
  const after = await readFile(file, "utf8");
  return { text: after, data: parseDocument(after, file) };
}

describe("addServerEntry", () => {
  it("keeps a YAML file's comments, other servers and key order", async () => {
    const { text, data } = await added(
      "keep.yaml",
      "# head\nserve:\n  port: 1\nservers:\n  old:\n    command: x # why\n",
    );
    expect(text.startsWith("# head\nserve:\n  port: 1\nservers:\n  old:\n    command: x # why\n")).toBe(true);
    expect(text).toContain("  # from the registry\n  new:\n");
    expect(data.servers.new).toEqual(ENTRY);
  });

  it("fills a YAML file whose servers map is empty or missing", async () => {
    expect((await added("empty-map.yaml", "servers: {}\n")).data.servers.new).toEqual(ENTRY);
    expect((await added("null-map.yaml", "servers:\n")).data.servers.new).toEqual(ENTRY);
    expect((await added("no-map.yaml", "# only a comment\n")).data.servers.new).toEqual(ENTRY);
  });

  it("creates a missing file", async () => {
    const { data } = await added("created.yaml", undefined);
    expect(data).toEqual({ servers: { new: ENTRY } });
  });

  it("inserts into JSON with comments and a trailing comma, keeping both", async () => {
    const source = '{\n  "servers": {\n    "old": { "command": "x" }, // mine\n  },\n  /* tail */\n}\n';
    const { text, data } = await added("trailing.jsonc", source);
    expect(text).toContain("// mine");
    expect(text).toContain("/* tail */");
    expect(data.servers).toEqual({ old: { command: "x" }, new: ENTRY });
  });

  it("adds a servers map to JSON that has none, and to {}", async () => {
    expect((await added("other.json", '{\n  "serve": { "port": 1 }\n}\n')).data).toEqual({
      serve: { port: 1 },
      servers: { new: ENTRY },
    });
    expect((await added("bare.json", "{}\n")).data).toEqual({ servers: { new: ENTRY } });
  });

  it("writes an mcpServers file's entry into mcpServers", async () => {
    const { data } = await added("claude.json", '{ "mcpServers": { "a": { "command": "x" } } }');
    expect(Object.keys(data.mcpServers)).toEqual(["a", "new"]);
  });

  it("keeps the file's permissions", async () => {
    await added("mode.yaml", "servers: {}\n");
    expect((await stat(join(dir, "mode.yaml"))).mode & 0o777).toBe(0o600);
  });

  it("refuses a name already there, and leaves the file as it was", async () => {
    const file = join(dir, "twice.yaml");
    await writeFile(file, "servers:\n  new: { command: x }\n");
    await expect(addServerEntry(file, "new", ENTRY)).rejects.toMatchObject({ path: "servers.new" });
    expect(await readFile(file, "utf8")).toBe("servers:\n  new: { command: x }\n");
  });
});
