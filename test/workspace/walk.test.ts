import { existsSync, lstatSync, readdirSync, renameSync, symlinkSync } from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { RootWall } from "../../src/workspace/root-wall.js";
import { walk } from "../../src/workspace/walk.js";
import { WorkspaceError } from "../../src/workspace/workspace-error.js";
import { removeTree, tempDir, writeTree } from "./helpers.js";

/** Names in the tree outside the root: none may ever come out of a walk. */
const OUTSIDE_NAME = "outside-secret.txt";

describe("walk against a directory swapped for a symlink", () => {
  let base: string;
  let root: string;
  let wall: RootWall;

  beforeEach(async () => {
    base = await tempDir("mcplex-walk-");
    root = path.join(base, "root");
    await writeTree(base, {
      "root/a/b/inside.txt": "inside\n",
      "root/a/z.txt": "z\n",
      [`outside/${OUTSIDE_NAME}`]: "secret\n",
    });
    wall = new RootWall(root);
  });
  afterEach(() => removeTree(base));

  /** Put a symlink to the outside directory where `rel` was (the real one is kept aside). */
  function swap(rel: string): void {
    const abs = path.join(root, rel);
    renameSync(abs, `${abs}.kept`);
    symlinkSync(path.join(base, "outside"), abs);
  }

  it("skips a subdirectory swapped between its parent's listing and its own, and goes on", () => {
    const seen: string[] = [];
    for (const entry of walk(wall, { rel: "", abs: wall.root }, { maxDepth: 5, respectGitignore: false })) {
      seen.push(entry.rel);
      // The walk has listed a/b as a directory and opens it when resumed: swap it right now.
      if (entry.rel === "a/b") swap("a/b");
    }
    expect(seen.join(" ")).not.toContain(OUTSIDE_NAME);
    // a/b.kept came after a was listed; the walk goes on with the rest of a.
    expect(seen).toEqual(["a", "a/b", "a/z.txt"]);
  });

  it("gives a path through the directory's descriptor that still names the entry listed", () => {
    for (const entry of walk(wall, { rel: "", abs: wall.root }, { maxDepth: 5, respectGitignore: false })) {
      if (entry.rel !== "a/b/inside.txt") continue;
      // The directory is now a symlink to outside: by path, lstat would see the outside tree.
      renameSync(path.join(root, "a"), path.join(root, "a.kept"));
      symlinkSync(path.join(base, "outside"), path.join(root, "a"));
      expect(lstatSync(entry.at).size).toBe("inside\n".length);
      expect(readdirSync(path.dirname(entry.at))).toEqual(["inside.txt"]);
    }
  });

  it("refuses a start directory swapped for a symlink after it was checked, as a race", () => {
    const start = { rel: "a", abs: path.join(root, "a") };
    swap("a");
    let error: unknown;
    const seen: string[] = [];
    try {
      for (const entry of walk(wall, start, { maxDepth: 5, respectGitignore: false })) seen.push(entry.rel);
    } catch (e) {
      error = e;
    }
    expect(seen).toEqual([]);
    expect(error).toBeInstanceOf(WorkspaceError);
    expect((error as WorkspaceError).reason).toBe("race");
    expect((error as WorkspaceError).message).toMatch(
      /Refused 'a': it was replaced or moved after it was checked/,
    );
  });

  it.skipIf(!existsSync("/proc/self/fd"))(
    "closes every directory it holds open when stopped early, aborted, or run to the end",
    async () => {
      await writeTree(root, { "d1/d2/d3/d4/leaf.txt": "leaf\n", "d1/d2/d3/other.txt": "o\n" });
      const openFds = () => readdirSync("/proc/self/fd").length;
      const before = openFds();
      const start = { rel: "", abs: wall.root };
      const options = { maxDepth: 10, respectGitignore: true };
      for (const entry of walk(wall, start, options)) if (entry.rel === "d1/d2/d3/d4") break;
      expect(openFds()).toBe(before);
      const controller = new AbortController();
      expect(() => {
        for (const entry of walk(wall, start, { ...options, signal: controller.signal }))
          if (entry.rel === "d1/d2") controller.abort();
      }).toThrow();
      expect(openFds()).toBe(before);
      expect([...walk(wall, start, options)].map((e) => e.rel)).toContain("d1/d2/d3/d4/leaf.txt");
      expect(openFds()).toBe(before);
    },
  );
});
