import { type ChildProcess, spawn } from "node:child_process";
import { mkdir, readdir, readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { Permissions } from "../../src/workspace/permissions.js";
import { RootWall } from "../../src/workspace/root-wall.js";
import { WorkspaceError } from "../../src/workspace/workspace-error.js";
import { writeInsideRoot } from "../../src/workspace/write-inside-root.js";
import { removeTree, tempDir, writeTree } from "./helpers.js";

describe("Permissions", () => {
  it("lets the first matching rule decide", () => {
    const p = new Permissions([
      { pattern: "src/generated/**", ops: ["read", "write"] },
      { pattern: "src/**", ops: ["read"] },
      { pattern: "out/**", ops: ["read", "write"] },
      { pattern: "secret/**", ops: [] },
    ]);
    expect(p.check("src/generated/a.ts", "write").allowed).toBe(true);
    expect(p.check("src/a.ts", "write")).toEqual({
      allowed: false,
      rule: 'rule #2 {"pattern":"src/**","ops":["read"]}',
    });
    expect(p.check("out/x/y.txt", "write").allowed).toBe(true);
    expect(p.check("secret/key", "read").allowed).toBe(false);
    expect(p.check("README.md", "read")).toEqual({ allowed: true, rule: "default (read-only)" });
    expect(p.check("README.md", "write")).toEqual({ allowed: false, rule: "default (read-only)" });
    expect(p.canWriteAnything).toBe(true);
  });

  it("is read-only by default and writable everywhere with allowWrite", () => {
    expect(new Permissions().canWriteAnything).toBe(false);
    const open = new Permissions([], true);
    expect(open.check("any/where.txt", "write")).toEqual({ allowed: true, rule: "default (allowWrite)" });
  });

  it("never grants .git, at any depth, whatever the rules", () => {
    const p = new Permissions([{ pattern: "**", ops: ["read", "write"] }], true);
    for (const rel of [".git", ".git/config", "vendor/lib/.git/HEAD"]) {
      expect(p.check(rel, "read")).toEqual({ allowed: false, rule: "no access to .git" });
    }
    expect(p.check(".gitignore", "read").allowed).toBe(true);
  });
});

/** Runs a child process that keeps swapping `target` between two states, truly concurrently. */
/** Runs a race script in a child; resolves once it is running (it prints "go" first). */
async function flipper(script: string): Promise<ChildProcess> {
  const child = spawn(process.execPath, ["-e", `process.stdout.write("go\\n");\n${script}`], {
    stdio: ["ignore", "pipe", "ignore"],
  });
  await new Promise<void>((resolve, reject) => {
    child.stdout!.once("data", () => resolve());
    child.once("exit", (code) => reject(new Error(`race script exited with ${code}`)));
  });
  return child;
}

/**
 * Repeats `attempt` at least `min` times and until both outcomes were seen, so that the
 * race is really exercised however the scheduler treats the racing process (bounded).
 */
async function race(
  attempt: (i: number) => Promise<boolean>,
  min = 400,
  max = 20_000,
): Promise<{ ok: number; refused: number }> {
  const seen = { ok: 0, refused: 0 };
  for (let i = 0; i < max && (i < min || seen.ok === 0 || seen.refused === 0); i++) {
    if (await attempt(i)) seen.ok++;
    else seen.refused++;
  }
  return seen;
}

describe("RootWall under check-versus-use races", () => {
  let base: string;
  let root: string;
  let child: ChildProcess | undefined;

  beforeEach(async () => {
    base = await tempDir("mcplex-race-");
    root = path.join(base, "root");
    await writeTree(base, { "root/keep.txt": "keep\n", "outside/secret.txt": "SECRET\n" });
    await mkdir(path.join(base, "outside-dir"));
  });
  afterEach(async () => {
    child?.kill("SIGKILL");
    child = undefined;
    await removeTree(base);
  });

  it("never reads outside while a file flips between a regular file and a symlink out", async () => {
    const flip = path.join(root, "flip");
    await writeFile(flip, "inside\n");
    child = await flipper(`
      const fs = require("fs");
      const flip = ${JSON.stringify(flip)}, out = ${JSON.stringify(path.join(base, "outside/secret.txt"))};
      for (let i = 0; ; i++) {
        try { fs.symlinkSync(out, flip + ".l"); fs.renameSync(flip + ".l", flip); } catch {}
        try { fs.writeFileSync(flip + ".f", "inside\\n"); fs.renameSync(flip + ".f", flip); } catch {}
      }`);
    const wall = new RootWall(root, new Permissions());
    const seen = await race(async () => {
      let file: Awaited<ReturnType<RootWall["openFile"]>>;
      try {
        file = await wall.openFile("flip");
      } catch (error) {
        expect(error).toBeInstanceOf(WorkspaceError);
        return false;
      }
      try {
        expect((await file.handle.readFile()).toString()).not.toContain("SECRET");
        return true;
      } finally {
        await file.handle.close();
      }
    });
    // Both outcomes happened, so the race was really exercised.
    expect(seen.refused).toBeGreaterThan(0);
    expect(seen.ok).toBeGreaterThan(0);
  });

  it("never writes outside while a directory flips between a real one and a symlink out", async () => {
    const dir = path.join(root, "d");
    await mkdir(dir);
    child = await flipper(`
      const fs = require("fs");
      const dir = ${JSON.stringify(dir)}, out = ${JSON.stringify(path.join(base, "outside-dir"))};
      for (;;) {
        try { fs.rmSync(dir, { recursive: true, force: true }); fs.symlinkSync(out, dir); } catch {}
        try { fs.unlinkSync(dir); fs.mkdirSync(dir); } catch {}
      }`);
    const wall = new RootWall(root, new Permissions([], true));
    const seen = await race(async (i) => {
      try {
        await writeInsideRoot(wall, `d/f${i}.txt`, "x", { createParents: i % 2 === 0 });
        return true;
      } catch {
        return false;
      }
    });
    child.kill("SIGKILL");
    child = undefined;
    expect(await readdir(path.join(base, "outside-dir"))).toEqual([]);
    expect(await readFile(path.join(base, "outside/secret.txt"), "utf8")).toBe("SECRET\n");
    expect(seen.refused).toBeGreaterThan(0);
  });

  it("writes atomically: no temp file is left behind and readers never see a partial file", async () => {
    const wall = new RootWall(root, new Permissions([], true));
    const big = "y".repeat(2_000_000);
    const writes = Array.from({ length: 5 }, (_, i) =>
      writeInsideRoot(wall, "keep.txt", i % 2 ? big : "small\n"),
    );
    const reads = Array.from({ length: 20 }, () => readFile(path.join(root, "keep.txt"), "utf8"));
    for (const text of await Promise.all(reads)) expect(["keep\n", "small\n", big]).toContain(text);
    await Promise.all(writes);
    expect(await readdir(root)).toEqual(["keep.txt"]);
  });
});
