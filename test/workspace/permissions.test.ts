import { readdir, readFile, symlink } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Connection, connect, removeTree, standardTree, textOf, writeTree } from "./helpers.js";

describe("permission rules over stdio", () => {
  let root: string;
  let ruled: Connection;
  let readOnly: Connection;
  let call: (name: string, args: Record<string, unknown>) => Promise<any>;
  const original = 'export const greeting = "hello";\nexport const needle = 42;\n';

  beforeAll(async () => {
    root = await standardTree();
    await writeTree(root, { "secret/key.txt": "needle-key\n" });
    await symlink(path.join(root, "src/index.ts"), path.join(root, "out/link-to-src"));
    [ruled, readOnly] = await Promise.all([
      connect(root, { era: "2026", rules: ["src/**=read", "out/**=read,write", "secret/**="] }),
      connect(root, { era: "2025" }),
    ]);
    call = (name, args) => ruled.client.callTool({ name, arguments: args });
  });
  afterAll(async () => {
    await Promise.all([ruled?.close(), readOnly?.close()]);
    await removeTree(root);
  });

  it("offers no write tools when nothing is writable", async () => {
    const names = (await readOnly.client.listTools()).tools.map((t) => t.name).sort();
    expect(names).toEqual(["list_directory", "read_file", "search_files"]);
    // An unknown tool is a protocol error (the SDK's answer), not a tool result.
    await expect(
      readOnly.client.callTool({ name: "write_file", arguments: { path: "x", content: "x" } }),
    ).rejects.toThrow(/Tool write_file not found/);
    expect(await readdir(root)).not.toContain("x");
  });

  it("writes where a rule grants write", async () => {
    const result = await call("write_file", { path: "out/ok.txt", content: "ok\n" });
    expect(result.isError).toBeFalsy();
    expect(await readFile(path.join(root, "out/ok.txt"), "utf8")).toBe("ok\n");
  });

  it("refuses writes a rule makes read-only, naming the rule, and writes nothing", async () => {
    const result = await call("write_file", { path: "src/new.ts", content: "x" });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toBe(
      'Access denied: write of \'src/new.ts\' is not allowed by rule #1 {"pattern":"src/**","ops":["read"]}',
    );
    expect(await readdir(path.join(root, "src"))).toEqual(["index.ts", "util"]);
    const edit = await call("edit_file", {
      path: "src/index.ts",
      edits: [{ oldText: "hello", newText: "bye" }],
    });
    expect(textOf(edit)).toMatch(/rule #1/);
    expect(await readFile(path.join(root, "src/index.ts"), "utf8")).toBe(original);
  });

  it("falls back to the read-only default where no rule matches", async () => {
    const result = await call("write_file", { path: "README.md", content: "x" });
    expect(textOf(result)).toMatch(/not allowed by default \(read-only\)/);
    expect(await readFile(path.join(root, "README.md"), "utf8")).toBe("# Demo\n\nA small tree.\n");
    expect(textOf(await call("read_file", { path: "README.md" }))).toContain("# Demo");
  });

  it("judges a symlink by where it leads: a writable link into a read-only path is refused", async () => {
    const result = await call("write_file", { path: "out/link-to-src", content: "pwned" });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toMatch(/resolved to 'src\/index.ts'.*rule #1/);
    expect(await readFile(path.join(root, "src/index.ts"), "utf8")).toBe(original);
  });

  it("hides denied paths from reads, listings, searches and resources", async () => {
    expect(textOf(await call("read_file", { path: "secret/key.txt" }))).toMatch(/rule #3/);
    const list = await call("list_directory", { path: ".", depth: 3 });
    const paths = (list.structuredContent as any).entries.map((e: any) => e.path);
    expect(paths.some((p: string) => p.startsWith("secret/"))).toBe(false);
    const search = await call("search_files", { query: "needle-key" });
    expect((search.structuredContent as any).matches).toEqual([]);
    const { resources } = await ruled.client.listResources();
    expect(resources.some((r) => r.name.startsWith("secret/"))).toBe(false);
  });

  it("keeps .git closed even with allowWrite", async () => {
    const open = await connect(root, { allowWrite: true });
    try {
      const write = await open.client.callTool({
        name: "write_file",
        arguments: { path: ".git/config", content: "x" },
      });
      expect(textOf(write)).toMatch(/no access to .git/);
      const read = await open.client.callTool({ name: "read_file", arguments: { path: ".git/config" } });
      expect(textOf(read)).toMatch(/no access to .git/);
      expect(await readFile(path.join(root, ".git/config"), "utf8")).toBe("[core]\n\tneedle = secret\n");
    } finally {
      await open.close();
    }
  });
});
