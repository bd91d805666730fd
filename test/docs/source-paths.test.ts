import { existsSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { markdownFiles, ROOT, readDoc } from "./markdown-files.js";

/** Every `src/...` path a text names (globs such as `src/**` left out: they name no one file). */
function sourcePaths(text: string): string[] {
  const paths = new Set<string>();
  for (const m of text.matchAll(/(?<![\w./-])src\/[\w./*{}-]*/g)) {
    const path = m[0].replace(/[.,:;]+$/, "");
    if (!/[*{}]/.test(path)) paths.add(path);
  }
  return [...paths];
}

describe("source paths named in README.md and docs/", () => {
  it("all exist", () => {
    const missing: string[] = [];
    for (const file of markdownFiles()) {
      for (const path of sourcePaths(readDoc(file))) {
        if (!existsSync(join(ROOT, path))) missing.push(`${file}: ${path}`);
      }
    }
    expect(missing).toEqual([]);
  });
});
