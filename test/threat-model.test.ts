import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { describe, expect, it } from "vitest";

const root = join(import.meta.dirname, "..");
const text = readFileSync(join(root, "docs/threat-model.md"), "utf8");

/** The `### ` sections under `## Boundaries`, each with its table's rows. */
function boundarySections(): { title: string; rows: string[] }[] {
  const start = text.indexOf("\n## Boundaries");
  const end = text.indexOf("\n## ", start + 1);
  const part = text.slice(start, end === -1 ? undefined : end);
  return part
    .split("\n### ")
    .slice(1)
    .map((section) => {
      const [title = "", ...lines] = section.split("\n");
      const rows = lines.filter((line) => line.startsWith("| ") && !/^\| (boundary|---)/.test(line));
      return { title, rows };
    });
}

/** Every file of `dir` (recursively), relative to the repository. */
function filesUnder(dir: string): string[] {
  return readdirSync(join(root, dir), { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => relative(root, join(entry.parentPath, entry.name)));
}

describe("docs/threat-model.md", () => {
  it("gives every boundary section at least one boundary, each with its check and its test", () => {
    const sections = boundarySections();
    expect(sections.length).toBeGreaterThan(5);
    for (const { title, rows } of sections) {
      expect(rows, `section "${title}" lists no boundary`).not.toHaveLength(0);
      for (const row of rows) {
        const cells = row.split(" | ");
        expect(cells, `row of "${title}" has three cells: ${row}`).toHaveLength(3);
        expect(cells[2], `row of "${title}" names no test file: ${row}`).toMatch(/\.test\.ts`/);
      }
    }
  });

  it("names only files that exist (checks under src/, tests by their path)", () => {
    const named = [...text.matchAll(/`([\w./-]+\.(?:ts|mjs|js))`/g)].map((m) => m[1] as string);
    expect(named.length).toBeGreaterThan(20);
    const missing = named.filter((path) => {
      const candidates = /^(src|test|bench|scripts|web)\//.test(path) ? [path] : [join("src", path)];
      return !candidates.some((candidate) => existsSync(join(root, candidate)));
    });
    expect(missing).toEqual([]);
  });

  it("names every hostile test file of the suite", () => {
    const hostile = filesUnder("test").filter((path) => path.endsWith(".hostile.test.ts"));
    expect(hostile.length).toBeGreaterThan(20);
    expect(hostile.filter((path) => !text.includes(`\`${path}\``))).toEqual([]);
  });
});
