import { readdirSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { proseLines, ROOT, readDoc } from "./markdown-files.js";

const PAGE = "docs/design/layout.md";

/**
 * The files layout.md names, by folder: each `## ` heading naming a folder of `src/` (`src/hub/`)
 * or a file directly in it (`src/errors.ts`) opens a section, and every bare file name in
 * backticks in it (`hub.ts`, never `fronts/caller.ts`, which points elsewhere) names a file of
 * that folder.
 */
function namedFiles(text: string): Map<string, Set<string>> {
  const sections = new Map<string, Set<string>>();
  let names: Set<string> | undefined;
  for (const { text: line } of proseLines(text)) {
    const heading = /^## `(src(?:\/[\w/-]+)?)\/([\w-]*\.ts)?`\s*$/.exec(line);
    if (heading !== null) {
      const folder = heading[1] ?? "src";
      names = sections.get(folder) ?? new Set();
      sections.set(folder, names);
      if (heading[2] !== undefined) names.add(heading[2]);
      continue;
    }
    if (line.startsWith("## ")) names = undefined;
    if (names === undefined) continue;
    for (const m of line.matchAll(/`([\w.-]+\.ts)`/g)) names.add(m[1] ?? "");
  }
  return sections;
}

/** The `.ts` files of every folder under `src/`, by folder (relative to the root). */
function sourceFiles(): Map<string, Set<string>> {
  const folders = new Map<string, Set<string>>();
  const walk = (dir: string): void => {
    for (const entry of readdirSync(join(ROOT, dir), { withFileTypes: true })) {
      if (entry.isDirectory()) walk(`${dir}/${entry.name}`);
      else if (entry.name.endsWith(".ts")) {
        const files = folders.get(dir) ?? new Set();
        files.add(entry.name);
        folders.set(dir, files);
      }
    }
  };
  walk("src");
  return folders;
}

describe(PAGE, () => {
  const named = namedFiles(readDoc(PAGE));
  const actual = sourceFiles();

  it("names every file of src/ in its folder's section", () => {
    const missing: string[] = [];
    for (const [folder, files] of actual) {
      for (const file of files) if (!named.get(folder)?.has(file)) missing.push(`${folder}/${file}`);
    }
    expect(missing).toEqual([]);
  });

  it("names no file that is not in its folder", () => {
    const absent: string[] = [];
    for (const [folder, files] of named) {
      for (const file of files) if (!actual.get(folder)?.has(file)) absent.push(`${folder}/${file}`);
    }
    expect(absent).toEqual([]);
  });

  it("reads a section for every folder (the test itself works)", () => {
    expect([...named.keys()].sort()).toEqual([...actual.keys()].sort());
  });
});
