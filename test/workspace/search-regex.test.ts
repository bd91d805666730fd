import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RootWall } from "../../src/workspace/root-wall.js";
import { searchFiles } from "../../src/workspace/search.js";
import { WorkspaceError } from "../../src/workspace/workspace-error.js";

// Regex searches run in a worker with a time limit per text: a regex that backtracks without
// end fails the search with a clear error instead of freezing the server, and everything
// else about the search (lines, order, limits) is what the inline search gives.

let root: string;
let wall: RootWall;
const EVIL = `${"a".repeat(40)}b`;

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), "mcplex-regex-"));
  await writeFile(join(root, "evil.txt"), `fine line\n${EVIL}\n`);
  // 300 files of 20 KB: more than one 4 MiB batch for the worker.
  for (let i = 0; i < 300; i++) {
    const lines = Array.from({ length: 400 }, (_, n) =>
      n === i % 400 ? `id_${i} marker` : `line ${n} of ${i}`,
    );
    await writeFile(join(root, `f${String(i).padStart(3, "0")}.txt`), `${lines.join("\n")}\n`);
  }
  // A file larger than the 1 MiB read window, matched in its third window.
  await writeFile(join(root, "zbig.txt"), `${"filler text\n".repeat(200_000)}id_big marker\n`);
  wall = new RootWall(root);
});
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

const options = { maxResults: 10_000, maxBytes: 1e9 };

describe("regex search", () => {
  it("fails a regex that backtracks without end, naming the file and the limit, and keeps the thread free", async () => {
    // A timer set before the search must fire before the search gives up: the regex runs
    // on another thread, not on this one.
    let ticked = false;
    setTimeout(() => {
      ticked = true;
    }, 20);
    const search = searchFiles(wall, { ...options, query: "(a+)+$", regex: true, regexTimeoutMs: 500 });
    let tickedBeforeSettling: boolean | undefined;
    const error = await search.then(
      () => undefined,
      (e: unknown) => {
        tickedBeforeSettling = ticked;
        return e;
      },
    );
    expect(tickedBeforeSettling).toBe(true);
    expect(error).toBeInstanceOf(WorkspaceError);
    expect((error as WorkspaceError).reason).toBe("too-slow");
    expect((error as Error).message).toMatch(/\/\(a\+\)\+\$\/ ran longer than 500 ms on evil\.txt/);
    expect((error as Error).message).toMatch(/nested quantifiers/);
  });

  it("gives the same lines, columns and order as a plain-text search, across batches and windows", async () => {
    const viaRegex = await searchFiles(wall, { ...options, query: "id_\\w+ marker", regex: true });
    const plain = await searchFiles(wall, { ...options, query: " marker" });
    expect(viaRegex.matches).toHaveLength(301);
    expect(viaRegex.matches.map((m) => [m.path, m.line, m.text])).toEqual(
      plain.matches.map((m) => [m.path, m.line, m.text]),
    );
    expect(viaRegex.matches.at(-1)).toMatchObject({ path: "zbig.txt", line: 200_001, column: 1 });
    expect(viaRegex.files.find((f) => f.path === "zbig.txt")?.size).toBe(12 * 200_000 + 14);
    expect(viaRegex.filesScanned).toBe(plain.filesScanned);
  });

  it("still searches after a timed-out regex, and stops at maxResults", async () => {
    await expect(
      searchFiles(wall, { ...options, query: "(a+)+$", regex: true, regexTimeoutMs: 200 }),
    ).rejects.toThrow(/ran longer than 200 ms/);
    const few = await searchFiles(wall, { ...options, maxResults: 5, query: "^id_\\d+", regex: true });
    expect(few.matches.map((m) => m.path)).toEqual([
      "f000.txt",
      "f001.txt",
      "f002.txt",
      "f003.txt",
      "f004.txt",
    ]);
    expect(few).toMatchObject({ truncated: true, truncatedBy: "maxResults" });
  });

  it("stops a regex stuck in the worker when the search is cancelled, well before the limit", async () => {
    const controller = new AbortController();
    const search = searchFiles(wall, {
      ...options,
      query: "(a+)+$",
      regex: true,
      regexTimeoutMs: 600_000,
      signal: controller.signal,
    });
    setTimeout(() => controller.abort(new Error("the client cancelled")), 50);
    await expect(search).rejects.toThrow("the client cancelled");
    const after = await searchFiles(wall, { ...options, query: "fine", regex: true });
    expect(after.matches.map((m) => m.path)).toEqual(["evil.txt"]);
  });
});
