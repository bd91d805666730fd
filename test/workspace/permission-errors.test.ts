import { spawnSync } from "node:child_process";
import { chmodSync, mkdirSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { removeTree, tempDir, writeTree } from "./helpers.js";

const repo = path.resolve(import.meta.dirname, "../..");
/** Root ignores file modes: the probe then runs as nobody, so that the modes apply. */
const asNobody = process.getuid?.() === 0 ? { uid: 65534, gid: 65534 } : {};

/** Runs read, list and write on `root` in a child process (as nobody under root) and returns each outcome. */
function probe(root: string): Record<string, { reason?: string; message: string }> {
  const script = `
    import { writeInsideRoot } from "./src/workspace/write-inside-root.js";
    import { RootWall } from "./src/workspace/root-wall.js";
    import { Permissions } from "./src/workspace/permissions.js";
    import { walk } from "./src/workspace/walk.js";
    const wall = new RootWall(process.argv[1], new Permissions([], true));
    const outcome = (p) => p.then(() => ({ message: "ok" }), (e) => ({ reason: e.reason, message: e.message }));
    const out = {
      read: await outcome(wall.openFile("locked/file.txt")),
      list: await outcome(wall.openDirectory("locked").then((dir) => [...walk(wall, dir, { maxDepth: 1, respectGitignore: false })])),
      write: await outcome(writeInsideRoot(wall, "locked/new.txt", "x")),
    };
    console.log(JSON.stringify(out));
  `;
  const run = spawnSync(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script, root], {
    cwd: repo,
    encoding: "utf8",
    ...asNobody,
  });
  if (run.status !== 0) throw new Error(`probe failed: ${run.stderr}`);
  return JSON.parse(run.stdout);
}

describe("file-system permission errors", () => {
  let root: string;

  beforeAll(async () => {
    root = await tempDir("mcplex-perm-");
    await writeTree(root, { "locked/file.txt": "secret\n" });
    mkdirSync(path.join(root, "open"));
    chmodSync(root, 0o755);
    chmodSync(path.join(root, "locked"), 0o700);
    chmodSync(path.join(root, "locked/file.txt"), 0o600);
    if (asNobody.uid === undefined) chmodSync(path.join(root, "locked"), 0o000);
  });
  afterAll(async () => {
    chmodSync(path.join(root, "locked"), 0o700);
    await removeTree(root);
  });

  it("are 'denied', naming the path and what to change, without the root's absolute path", () => {
    const out = probe(root);
    for (const [op, input] of [
      ["read", "locked/file.txt"],
      ["list", "locked"],
      ["write", "locked/new.txt"],
    ] as const) {
      expect(out[op]?.reason, op).toBe("denied");
      expect(out[op]?.message, op).toContain(`'${input}'`);
      expect(out[op]?.message, op).toMatch(/file system.*permission/);
      expect(out[op]?.message, op).not.toContain(root);
    }
  });
});
