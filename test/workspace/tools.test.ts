import { readFile, stat, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Connection, connect, ERAS, removeTree, standardTree, textOf } from "./helpers.js";

describe.each(ERAS)("workspace tools over stdio (%s protocol)", (era) => {
  let root: string;
  let conn: Connection;
  let call: (name: string, args: Record<string, unknown>) => Promise<any>;

  beforeAll(async () => {
    root = await standardTree();
    await writeFile(path.join(root, "big.txt"), `${"x".repeat(99)}\n`.repeat(12_000)); // 1.2 MB
    conn = await connect(root, { era, allowWrite: true });
    call = (name, args) => conn.client.callTool({ name, arguments: args });
  });
  afterAll(async () => {
    await conn?.close();
    await removeTree(root);
  });

  it("lists every tool with input and output schemas", async () => {
    const { tools } = await conn.client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual([
      "edit_file",
      "list_directory",
      "read_file",
      "search_files",
      "write_file",
    ]);
    for (const tool of tools) {
      expect(tool.inputSchema.type).toBe("object");
      expect(tool.outputSchema?.type).toBe("object");
    }
  });

  it("read_file returns the whole text with structured content", async () => {
    const result = await call("read_file", { path: "src/index.ts" });
    expect(result.isError).toBeFalsy();
    expect(textOf(result)).toBe('export const greeting = "hello";\nexport const needle = 42;\n');
    expect(result.structuredContent).toMatchObject({
      path: "src/index.ts",
      size: 59,
      totalLines: 2,
      truncated: false,
    });
  });

  it("read_file returns a line range", async () => {
    const result = await call("read_file", { path: "src/util/strings.ts", startLine: 2, endLine: 3 });
    expect(textOf(result)).toBe("  return s.toUpperCase();\n}\n");
    expect(result.structuredContent).toMatchObject({ startLine: 2, endLine: 3 });
  });

  it("read_file refuses a binary file, naming its size", async () => {
    const result = await call("read_file", { path: "data/image.png" });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toMatch(/'data\/image.png' is a binary file \(14 bytes\)/);
  });

  it("read_file refuses an oversized file with its size, but serves a line range of it", async () => {
    const whole = await call("read_file", { path: "big.txt" });
    expect(whole.isError).toBe(true);
    expect(textOf(whole)).toContain("1200000 bytes");
    const part = await call("read_file", { path: "big.txt", startLine: 11_999 });
    expect(part.structuredContent).toMatchObject({ startLine: 11_999, endLine: 12_000, truncated: false });
    expect(textOf(part)).toBe(`${"x".repeat(99)}\n`.repeat(2));
  });

  it("read_file on a missing file is a tool error, not a protocol error", async () => {
    const result = await call("read_file", { path: "nope.txt" });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toBe("'nope.txt' does not exist");
  });

  it("malformed params are rejected by the SDK's validation", async () => {
    const result = await call("read_file", { path: 42 }).catch((e: Error) => e);
    const message = result instanceof Error ? result.message : textOf(result);
    expect(message).toMatch(/Input validation error|Invalid/);
  });

  it("write_file creates a file atomically and reports it", async () => {
    const result = await call("write_file", { path: "out/new.txt", content: "fresh\n" });
    expect(result.isError).toBeFalsy();
    expect(result.structuredContent).toEqual({ path: "out/new.txt", bytes: 6, created: true });
    expect(await readFile(path.join(root, "out/new.txt"), "utf8")).toBe("fresh\n");
    const again = await call("write_file", { path: "out/new.txt", content: "second\n" });
    expect(again.structuredContent).toMatchObject({ created: false });
    expect(await readFile(path.join(root, "out/new.txt"), "utf8")).toBe("second\n");
  });

  it("write_file creates parent directories only when asked", async () => {
    const refused = await call("write_file", { path: "out/deep/er/file.txt", content: "x" });
    expect(refused.isError).toBe(true);
    expect(textOf(refused)).toMatch(/Parent directory of 'out\/deep\/er\/file.txt' does not exist/);
    await expect(stat(path.join(root, "out/deep"))).rejects.toThrow();
    const created = await call("write_file", {
      path: "out/deep/er/file.txt",
      content: "x",
      createParents: true,
    });
    expect(created.isError).toBeFalsy();
    expect(await readFile(path.join(root, "out/deep/er/file.txt"), "utf8")).toBe("x");
  });

  it("edit_file replaces unique exact text", async () => {
    await writeFile(path.join(root, "out/edit.txt"), "alpha\nbeta\ngamma\n");
    const result = await call("edit_file", {
      path: "out/edit.txt",
      edits: [
        { oldText: "beta", newText: "BETA\nBETA2" },
        { oldText: "gamma\n", newText: "" },
      ],
    });
    expect(result.isError).toBeFalsy();
    expect(result.structuredContent).toMatchObject({
      dryRun: false,
      edits: [
        { line: 2, removedLines: 1, addedLines: 2 },
        { line: 4, removedLines: 1, addedLines: 0 },
      ],
    });
    expect(await readFile(path.join(root, "out/edit.txt"), "utf8")).toBe("alpha\nBETA\nBETA2\n");
  });

  it("edit_file fails without change when the text is missing or not unique", async () => {
    await writeFile(path.join(root, "out/dup.txt"), "same\nsame\nother\n");
    const missing = await call("edit_file", {
      path: "out/dup.txt",
      edits: [
        { oldText: "other", newText: "changed" },
        { oldText: "absent", newText: "x" },
      ],
    });
    expect(missing.isError).toBe(true);
    expect(textOf(missing)).toMatch(/Edit #2: oldText was not found/);
    const ambiguous = await call("edit_file", {
      path: "out/dup.txt",
      edits: [{ oldText: "same", newText: "x" }],
    });
    expect(ambiguous.isError).toBe(true);
    expect(textOf(ambiguous)).toMatch(/occurs more than once .*lines 1, 2/);
    expect(await readFile(path.join(root, "out/dup.txt"), "utf8")).toBe("same\nsame\nother\n");
  });

  it("edit_file dryRun reports without writing", async () => {
    await writeFile(path.join(root, "out/dry.txt"), "one\n");
    const result = await call("edit_file", {
      path: "out/dry.txt",
      edits: [{ oldText: "one", newText: "two" }],
      dryRun: true,
    });
    expect(result.structuredContent).toMatchObject({ dryRun: true });
    expect(await readFile(path.join(root, "out/dry.txt"), "utf8")).toBe("one\n");
  });

  it("list_directory lists entries with type and size, hiding .git", async () => {
    const result = await call("list_directory", { path: "." });
    const entries = (result.structuredContent as any).entries as Array<{
      name: string;
      type: string;
      size: number;
    }>;
    const names = entries.map((e) => e.name);
    expect(names).toContain("README.md");
    expect(names).toContain("src");
    expect(names).not.toContain(".git");
    expect(entries.find((e) => e.name === "README.md")).toMatchObject({ type: "file", size: 22 });
    expect(entries.find((e) => e.name === "src")).toMatchObject({ type: "directory" });
    expect(textOf(result)).toContain("[DIR] src");
  });

  it("list_directory descends to the requested depth", async () => {
    const shallow = await call("list_directory", { path: "src" });
    expect((shallow.structuredContent as any).entries.map((e: any) => e.path)).toEqual([
      "src/index.ts",
      "src/util",
    ]);
    const deep = await call("list_directory", { path: "src", depth: 2 });
    expect((deep.structuredContent as any).entries.map((e: any) => e.path)).toEqual([
      "src/index.ts",
      "src/util",
      "src/util/strings.ts",
    ]);
  });

  it("search_files globs paths", async () => {
    const result = await call("search_files", { pattern: "*.ts" });
    expect((result.structuredContent as any).files.map((f: any) => f.path)).toEqual([
      "src/index.ts",
      "src/util/strings.ts",
    ]);
  });

  it("search_files finds text, skipping binary, .gitignored and .git files", async () => {
    const result = await call("search_files", { query: "needle" });
    const sc = result.structuredContent as any;
    expect(sc.matches).toEqual([
      { path: "src/index.ts", line: 2, column: 14, text: "export const needle = 42;" },
    ]);
    expect(sc.binarySkipped).toBeGreaterThanOrEqual(1);
    const withIgnored = await call("search_files", { query: "needle", includeIgnored: true });
    const paths = (withIgnored.structuredContent as any).matches.map((m: any) => m.path);
    expect(paths).toEqual(expect.arrayContaining(["app.log", "ignored/skip.txt", "src/index.ts"]));
    expect(paths).not.toContain(".git/config");
  });

  it("search_files supports case-insensitive and regex queries", async () => {
    const ci = await call("search_files", { query: "needle", caseSensitive: false, pattern: "**/*.md" });
    expect((ci.structuredContent as any).matches).toEqual([
      { path: "docs/guide.md", line: 4, column: 10, text: "find the NEEDLE here" },
    ]);
    const re = await call("search_files", { query: "^export (const|function) \\w+", regex: true });
    expect((re.structuredContent as any).matches.map((m: any) => `${m.path}:${m.line}`)).toEqual([
      "src/index.ts:1",
      "src/index.ts:2",
      "src/util/strings.ts:1",
    ]);
  });

  it("search_files honours maxResults and maxBytes", async () => {
    const few = await call("search_files", { query: "x", maxResults: 3, pattern: "big.txt" });
    expect((few.structuredContent as any).matches).toHaveLength(3);
    expect(few.structuredContent).toMatchObject({ truncated: true, truncatedBy: "maxResults" });
    const capped = await call("search_files", { query: "never-present", pattern: "big.txt", maxBytes: 4096 });
    expect(capped.structuredContent).toMatchObject({ truncated: true, truncatedBy: "maxBytes" });
    expect((capped.structuredContent as any).bytesScanned).toBeLessThanOrEqual(4096);
  });

  it("search_files reports an invalid regex as a tool error", async () => {
    const result = await call("search_files", { query: "(", regex: true });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toMatch(/Invalid regular expression/);
  });
});
