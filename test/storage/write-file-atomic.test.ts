import { mkdtemp, readdir, readFile, rm, stat, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { writeFileAtomic } from "../../src/storage/write-file-atomic.js";

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "mcplex-atomic-"));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe("writeFileAtomic", () => {
  it("creates and replaces a file with the mode asked for, leaving nothing beside it", async () => {
    const file = join(dir, "store.json");
    await writeFileAtomic(file, "one\n", { mode: 0o600 });
    expect(await readFile(file, "utf8")).toBe("one\n");
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    await writeFile(join(dir, "other"), "x", { mode: 0o644 });
    await writeFileAtomic(file, Buffer.from("two\n"), { mode: 0o600, durable: false });
    expect(await readFile(file, "utf8")).toBe("two\n");
    expect((await readdir(dir)).sort()).toEqual(["other", "store.json"]);
  });

  it("replaces a symlink at the name instead of writing through it", async () => {
    const target = join(dir, "target");
    await writeFile(target, "kept\n");
    await symlink(target, join(dir, "link"));
    await writeFileAtomic(join(dir, "link"), "new\n", { mode: 0o600 });
    expect(await readFile(target, "utf8")).toBe("kept\n");
    expect(await readFile(join(dir, "link"), "utf8")).toBe("new\n");
  });

  it("leaves the old file and no temp file when the write fails before the rename", async () => {
    const file = join(dir, "store.json");
    await writeFileAtomic(file, "old\n", { mode: 0o600 });
    const refused = writeFileAtomic(file, "new\n", {
      mode: 0o600,
      beforeRename: async () => {
        throw new Error("moved");
      },
    });
    await expect(refused).rejects.toThrow("moved");
    const aborted = new AbortController();
    aborted.abort();
    await expect(writeFileAtomic(file, "new\n", { mode: 0o600, signal: aborted.signal })).rejects.toThrow();
    expect(await readFile(file, "utf8")).toBe("old\n");
    expect(await readdir(dir)).toEqual(["store.json"]);
  });

  it("throws Node's error when the directory is missing, leaving nothing", async () => {
    const error = await writeFileAtomic(join(dir, "missing", "f"), "x", { mode: 0o600 }).catch((e) => e);
    expect(error.code).toBe("ENOENT");
    expect(await readdir(dir)).toEqual([]);
  });

  it("never shows a reader part of a file", async () => {
    const file = join(dir, "big");
    const big = "y".repeat(2_000_000);
    await writeFileAtomic(file, "small\n", { mode: 0o600 });
    const writes = Array.from({ length: 5 }, (_, i) =>
      writeFileAtomic(file, i % 2 ? big : "small\n", { mode: 0o600 }),
    );
    const reads = Array.from({ length: 20 }, () => readFile(file, "utf8"));
    for (const text of await Promise.all(reads)) expect(["small\n", big]).toContain(text);
    await Promise.all(writes);
    expect(await readdir(dir)).toEqual(["big"]);
  });
});
