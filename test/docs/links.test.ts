import { existsSync, statSync } from "node:fs";
import { dirname, join, normalize } from "node:path";
import { describe, expect, it } from "vitest";
import { markdownFiles, proseLines, ROOT, readDoc } from "./markdown-files.js";

/** The anchor GitHub gives a heading: lower case, punctuation dropped, spaces as hyphens. */
function slug(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, "")
    .replace(/\s/g, "-");
}

/** Every anchor of a Markdown file's headings, duplicates numbered as GitHub does. */
function anchorsOf(path: string): Set<string> {
  const seen = new Map<string, number>();
  const anchors = new Set<string>();
  for (const { text } of proseLines(readDoc(path))) {
    const heading = /^#{1,6}\s+(.*)$/.exec(text);
    if (heading === null) continue;
    const base = slug(heading[1]!);
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    anchors.add(n === 0 ? base : `${base}-${n}`);
  }
  return anchors;
}

/** The relative links of a file outside code: `[text](target)` and `![alt](target)`. */
function relativeLinks(path: string): Array<{ line: number; target: string }> {
  const links: Array<{ line: number; target: string }> = [];
  for (const { line, text } of proseLines(readDoc(path))) {
    for (const m of text.replace(/`[^`]*`/g, "").matchAll(/\]\(([^)\s]+)\)/g)) {
      const target = m[1]!;
      if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // https:, mailto:
      links.push({ line, target });
    }
  }
  return links;
}

describe("links in README.md and docs/", () => {
  it("point to files that exist, and to headings that exist", () => {
    const broken: string[] = [];
    for (const file of markdownFiles()) {
      for (const { line, target } of relativeLinks(file)) {
        const [pathPart, anchor] = target.split("#") as [string, string | undefined];
        const linked = pathPart === "" ? file : normalize(join(dirname(file), pathPart));
        if (!existsSync(join(ROOT, linked))) {
          broken.push(`${file}:${line}: ${target} (no ${linked})`);
          continue;
        }
        if (anchor === undefined || !linked.endsWith(".md") || statSync(join(ROOT, linked)).isDirectory())
          continue;
        if (!anchorsOf(linked).has(anchor)) broken.push(`${file}:${line}: ${target} (no heading #${anchor})`);
      }
    }
    expect(broken).toEqual([]);
  });
});
