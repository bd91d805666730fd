import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ROOT, readDoc } from "./markdown-files.js";

/** The HTTP paths a folder's code names as string literals (`"/readyz"`), file paths left out. */
function pathLiterals(folder: string): Set<string> {
  const paths = new Set<string>();
  for (const file of readdirSync(join(ROOT, folder)).filter((f) => f.endsWith(".ts"))) {
    const source = readFileSync(join(ROOT, folder, file), "utf8");
    for (const m of source.matchAll(/"(\/[a-z.][\w./-]*)"/g)) {
      if (!m[1]!.startsWith("/proc/")) paths.add(m[1]!);
    }
  }
  return paths;
}

describe("docs/reference/endpoints.md", () => {
  it("names every HTTP path the fronts and the dashboard serve", () => {
    const page = readDoc("docs/reference/endpoints.md");
    const paths = new Set([...pathLiterals("src/fronts"), ...pathLiterals("src/dashboard")]);
    expect(paths.size).toBeGreaterThan(10);
    expect([...paths].filter((p) => !page.includes(p)).sort()).toEqual([]);
  });
});
