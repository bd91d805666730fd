import { describe, expect, it } from "vitest";
import { markdownFiles, readDoc } from "./markdown-files.js";

describe("docs/design/", () => {
  it("keeps every line of every note under 120 characters", () => {
    const long: string[] = [];
    for (const file of markdownFiles().filter((f) => /^docs\/design\/[^/]+\.md$/.test(f))) {
      readDoc(file)
        .split("\n")
        .forEach((line, i) => {
          if ([...line].length > 120) long.push(`${file}:${i + 1} (${[...line].length})`);
        });
    }
    expect(long).toEqual([]);
  });

  it("lists every note in its index", () => {
    const index = readDoc("docs/design/README.md");
    const notes = markdownFiles()
      .filter((f) => /^docs\/design\/[^/]+\.md$/.test(f) && f !== "docs/design/README.md")
      .map((f) => f.slice("docs/design/".length));
    expect(notes.filter((n) => !index.includes(`](${n})`))).toEqual([]);
  });
});
