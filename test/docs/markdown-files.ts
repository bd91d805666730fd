import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";

/** The repository's root. */
export const ROOT = join(dirname(fileURLToPath(import.meta.url)), "../..");

/** README.md and every Markdown file under docs/, as paths relative to the root. */
export function markdownFiles(): string[] {
  const found: string[] = ["README.md"];
  const walk = (dir: string): void => {
    for (const entry of readdirSync(join(ROOT, dir), { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.name.endsWith(".md")) found.push(path);
    }
  };
  walk("docs");
  return found.sort();
}

/** A file's text, by its path relative to the root. */
export function readDoc(path: string): string {
  return readFileSync(join(ROOT, path), "utf8");
}

/** The lines of a Markdown text outside fenced code blocks, with their 1-based numbers. */
export function proseLines(text: string): Array<{ line: number; text: string }> {
  const out: Array<{ line: number; text: string }> = [];
  let fenced = false;
  text.split("\n").forEach((line, i) => {
    if (line.trimStart().startsWith("```")) fenced = !fenced;
    else if (!fenced) out.push({ line: i + 1, text: line });
  });
  return out;
}

/** `path` relative to the root, for messages. */
export function fromRoot(path: string): string {
  return relative(ROOT, path);
}
