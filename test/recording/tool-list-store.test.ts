/**
 * The one store of servers' last-seen tool lists, on a real directory: one file per server,
 * redacted before it is kept, never outside its folder, read back as `--simulate` reads it.
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, unlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { redactor } from "../../src/config/redact.js";
import { defaultCacheDir } from "../../src/recording/default-cache-dir.js";
import { readToolList, ToolListStore, toolListFile } from "../../src/recording/tool-list-store.js";

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "mcplex-tool-lists-"));
  dirs.push(dir);
  return dir;
}

const SECRET = "tool-list-secret-77ab";
const tools = [
  {
    name: "search",
    description: `uses key ${SECRET}`,
    inputSchema: { type: "object", properties: { [SECRET]: {} } },
  },
];

describe("ToolListStore", () => {
  it("writes each server's list to tools/NAME.json with secrets redacted, keys included", async () => {
    const dir = tempDir();
    const store = new ToolListStore({ dir, redact: redactor([SECRET]) });
    await store.save({ server: "github", definition: "abc", tools });
    const text = readFileSync(join(dir, "tools", "github.json"), "utf8");
    expect(text).not.toContain(SECRET);
    const read = readToolList(dir, "github");
    expect(read).toMatchObject({ server: "github", definition: "abc" });
    expect(read?.tools[0]).toEqual({
      name: "search",
      description: "uses key ***",
      inputSchema: { type: "object", properties: { "***": {} } },
    });
    expect(Date.parse(read!.savedAt)).not.toBeNaN();
    // A second store (a later run) reads what the first wrote.
    expect(await new ToolListStore({ dir, redact: (t) => t }).get("github")).toEqual(read);
  });

  it("keeps lists in memory only without a directory, redacted all the same", async () => {
    const store = new ToolListStore({ redact: redactor([SECRET]) });
    await store.save({ server: "github", tools });
    expect(JSON.stringify(await store.get("github"))).not.toContain(SECRET);
  });

  it("writes nothing when the list saved is the one last saved", async () => {
    const dir = tempDir();
    const store = new ToolListStore({ dir, redact: (t) => t });
    await store.save({ server: "a", tools });
    unlinkSync(join(dir, "tools", "a.json"));
    await store.save({ server: "a", tools });
    expect(existsSync(join(dir, "tools", "a.json"))).toBe(false);
    await store.save({ server: "a", tools: [] });
    expect(readToolList(dir, "a")?.tools).toEqual([]);
  });

  it("keeps a server whose name is not a plain file name inside its folder", async () => {
    const dir = tempDir();
    const store = new ToolListStore({ dir: join(dir, "cache"), redact: (t) => t });
    for (const server of ["../escape", "a/b", ".hidden", ".."]) await store.save({ server, tools });
    expect(readdirSync(dir)).toEqual(["cache"]);
    expect(readdirSync(join(dir, "cache"))).toEqual(["tools"]);
    expect(readdirSync(join(dir, "cache", "tools")).sort()).toEqual(
      ["%2E%2E%2Fescape.json", "a%2Fb.json", "%2Ehidden.json", "%2E%2E.json"].sort(),
    );
    expect(readToolList(join(dir, "cache"), "a/b")?.server).toBe("a/b");
    expect(toolListFile("/c", "memory")).toBe("/c/tools/memory.json");
  });

  it("reads a list of the earlier format (no definition) and takes no unreadable file for a list", async () => {
    const dir = tempDir();
    const store = new ToolListStore({ dir, redact: (t) => t });
    await store.save({ server: "old", serverInfo: { name: "old", version: "1" }, tools });
    expect(readToolList(dir, "old")?.definition).toBeUndefined();
    expect(readToolList(dir, "missing")).toBeUndefined();
  });

  it("is found in MCPLEX_CACHE_DIR, else under MCPLEX_HOME, else the XDG cache directory", () => {
    expect(defaultCacheDir({ MCPLEX_CACHE_DIR: "/c", MCPLEX_HOME: "/h" })).toBe("/c");
    expect(defaultCacheDir({ MCPLEX_HOME: "/h", XDG_CACHE_HOME: "/x" })).toBe("/h/cache");
    expect(defaultCacheDir({ XDG_CACHE_HOME: "/x" })).toBe("/x/mcplex");
  });
});
