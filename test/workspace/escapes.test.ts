import { execFileSync } from "node:child_process";
import { mkdir, readdir, readFile, stat, symlink, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Connection, connect, ERAS, removeTree, tempDir, textOf, writeTree } from "./helpers.js";

const isRoot = process.getuid?.() === 0;

describe.each(ERAS)("the root is a hard wall (%s protocol)", (era) => {
  let base: string;
  let root: string;
  let outside: string;
  let conn: Connection;
  let call: (name: string, args: Record<string, unknown>) => Promise<any>;

  beforeAll(async () => {
    base = await tempDir("mcplex-wall-");
    root = path.join(base, "root");
    outside = path.join(base, "outside");
    await writeTree(base, {
      "root/inside.txt": "inside\n",
      "root/.git/config": "[core]\n",
      "outside/secret.txt": "SECRET\n",
    });
    await mkdir(path.join(base, "outside-dir"));
    await symlink(path.join(outside, "secret.txt"), path.join(root, "link-out"));
    await symlink(path.join(base, "outside-dir"), path.join(root, "dir-out"));
    await symlink(path.join(root, ".git/config"), path.join(root, "link-git"));
    await symlink("/dev/null", path.join(root, "dev-null"));
    execFileSync("mkfifo", [path.join(root, "pipe")]);
    if (isRoot) execFileSync("mknod", [path.join(root, "zero"), "c", "1", "5"]);
    conn = await connect(root, { era, allowWrite: true });
    call = (name, args) => conn.client.callTool({ name, arguments: args });
  });
  afterAll(async () => {
    await conn?.close();
    await removeTree(base);
  });

  async function outsideUntouched(): Promise<void> {
    expect(await readFile(path.join(outside, "secret.txt"), "utf8")).toBe("SECRET\n");
    expect(await readdir(outside)).toEqual(["secret.txt"]);
    expect(await readdir(path.join(base, "outside-dir"))).toEqual([]);
    expect((await readdir(base)).sort()).toEqual(["outside", "outside-dir", "root"]);
  }

  it("refuses '..' that leaves the root, naming the path and the rule", async () => {
    for (const p of ["../outside/secret.txt", "..", "a/../../outside/secret.txt"]) {
      const result = await call("read_file", { path: p });
      expect(result.isError).toBe(true);
      expect(textOf(result)).toContain(`Refused '${p}'`);
      expect(textOf(result)).toContain("rule: root boundary");
    }
    const write = await call("write_file", { path: "../outside/new.txt", content: "x" });
    expect(textOf(write)).toMatch(/Refused '..\/outside\/new.txt'.*root boundary/);
    await outsideUntouched();
  });

  it("accepts '..' that stays inside the root", async () => {
    const result = await call("read_file", { path: "sub/../inside.txt" });
    expect(textOf(result)).toBe("inside\n");
  });

  it("refuses absolute paths outside the root and accepts them inside", async () => {
    const result = await call("read_file", { path: "/etc/passwd" });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toMatch(/Refused '\/etc\/passwd'.*root boundary/);
    const write = await call("write_file", { path: path.join(outside, "x.txt"), content: "x" });
    expect(write.isError).toBe(true);
    expect(textOf(await call("read_file", { path: path.join(root, "inside.txt") }))).toBe("inside\n");
    await outsideUntouched();
  });

  it("refuses symlinks that point outside, for reading and writing", async () => {
    const read = await call("read_file", { path: "link-out" });
    expect(read.isError).toBe(true);
    expect(textOf(read)).toMatch(
      /Refused 'link-out': it resolves to .*outside.*symlink target outside the root/,
    );
    const write = await call("write_file", { path: "link-out", content: "pwned" });
    expect(write.isError).toBe(true);
    const edit = await call("edit_file", {
      path: "link-out",
      edits: [{ oldText: "SECRET", newText: "pwned" }],
    });
    expect(edit.isError).toBe(true);
    await outsideUntouched();
  });

  it("refuses writes and listings through a symlinked directory that points outside", async () => {
    const write = await call("write_file", { path: "dir-out/new.txt", content: "x" });
    expect(write.isError).toBe(true);
    expect(textOf(write)).toMatch(/Refused 'dir-out\/new.txt'.*outside the workspace root/);
    const deep = await call("write_file", { path: "dir-out/a/b/new.txt", content: "x", createParents: true });
    expect(deep.isError).toBe(true);
    const list = await call("list_directory", { path: "dir-out" });
    expect(list.isError).toBe(true);
    const search = await call("search_files", { query: "SECRET", includeIgnored: true });
    expect((search.structuredContent as any).matches).toEqual([]);
    await outsideUntouched();
  });

  it("refuses a symlink inside the root that leads into .git", async () => {
    const result = await call("read_file", { path: "link-git" });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toMatch(
      /Access denied: read of 'link-git' \(resolved to '.git\/config'\).*no access to .git/,
    );
    const direct = await call("write_file", { path: ".git/config", content: "x" });
    expect(textOf(direct)).toMatch(/no access to .git/);
    expect(await readFile(path.join(root, ".git/config"), "utf8")).toBe("[core]\n");
  });

  it("refuses NUL bytes in paths", async () => {
    const result = await call("read_file", { path: "inside.txt\u0000.png" });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toMatch(/contains a NUL byte.*rule: no NUL bytes/);
    const write = await call("write_file", { path: "new\u0000.txt", content: "x" });
    expect(write.isError).toBe(true);
    expect((await readdir(root)).some((n) => n.startsWith("new"))).toBe(false);
  });

  it("refuses FIFOs without blocking, for reading and writing", async () => {
    const read = await call("read_file", { path: "pipe" });
    expect(textOf(read)).toMatch(/Refused 'pipe': it is a FIFO, not a regular file/);
    const write = await call("write_file", { path: "pipe", content: "x" });
    expect(textOf(write)).toMatch(/a FIFO/);
    expect((await stat(path.join(root, "pipe"))).isFIFO()).toBe(true);
    const resource = conn.client.readResource({ uri: `file://${path.join(root, "pipe")}` });
    await expect(resource).rejects.toThrow(/FIFO/);
  });

  it("refuses device files, through a symlink or in place", async () => {
    const viaLink = await call("read_file", { path: "dev-null" });
    expect(textOf(viaLink)).toMatch(/resolves to \/dev\/null, outside the workspace root/);
    if (isRoot) {
      const device = await call("read_file", { path: "zero" });
      expect(textOf(device)).toMatch(/Refused 'zero': it is a device file/);
      const write = await call("write_file", { path: "zero", content: "x" });
      expect(textOf(write)).toMatch(/a device file/);
    }
  });

  it("never follows symlinks while listing or searching", async () => {
    const list = await call("list_directory", { path: ".", depth: 5 });
    const entries = (list.structuredContent as any).entries as Array<{ path: string; type: string }>;
    expect(entries.find((e) => e.path === "dir-out")?.type).toBe("symlink");
    expect(entries.some((e) => e.path.startsWith("dir-out/") || e.path.startsWith(".git"))).toBe(false);
    await writeFile(path.join(base, "outside-dir", "planted.txt"), "needle\n");
    try {
      const search = await call("search_files", { query: "needle" });
      expect((search.structuredContent as any).matches).toEqual([]);
    } finally {
      await removeTree(path.join(base, "outside-dir", "planted.txt"));
    }
  });
});
