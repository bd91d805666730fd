import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ROOT, readDoc } from "./markdown-files.js";

/** The string literals of an array's text, and the names it spreads or names (`...COMMON_KEYS`, `keys`). */
function arrayParts(text: string): { literals: string[]; names: string[] } {
  const literals = [...text.matchAll(/"([^"]+)"/g)].map((m) => m[1]!);
  const names = [...text.replace(/"[^"]*"/g, "").matchAll(/[A-Za-z_][\w]*/g)]
    .map((m) => m[0])
    .filter((n) => n !== "as" && n !== "const");
  return { literals, names };
}

/**
 * Every key the config readers accept (the `valid` lists they pass to `reader.knownKeys`), with
 * the lists named by a constant resolved across src/config/*.ts.
 */
function acceptedConfigKeys(): Set<string> {
  const dir = join(ROOT, "src/config");
  const sources = readdirSync(dir)
    .filter((f) => f.endsWith(".ts"))
    .map((f) => readFileSync(join(dir, f), "utf8"));
  const constants = new Map<string, string>();
  for (const source of sources) {
    for (const m of source.matchAll(/const\s+(\w+)(?:\s*:[^=]+)?\s*=\s*\[([^\]]*)\]/g)) {
      constants.set(m[1]!, m[2]!);
    }
  }
  const keys = new Set<string>();
  const resolve = (text: string, seen: Set<string>): void => {
    const { literals, names } = arrayParts(text);
    for (const key of literals) keys.add(key);
    for (const name of names) {
      const list = constants.get(name);
      if (list === undefined)
        throw new Error(`knownKeys list ${name} is not a constant array of src/config/`);
      if (!seen.has(name)) resolve(list, new Set([...seen, name]));
    }
  };
  for (const source of sources) {
    // The last argument of each call: an array literal, or the name of one.
    for (const m of source.matchAll(/\.knownKeys\(([\s\S]*?)\);/g)) {
      const call = m[1]!.trim().replace(/,$/, "");
      const list = call.endsWith("]") ? call.slice(call.lastIndexOf("[") + 1, -1) : /\w+$/.exec(call)![0];
      resolve(list, new Set());
    }
  }
  return keys;
}

describe("docs/reference/config-keys.md", () => {
  it("names every key the config readers accept", () => {
    const page = readDoc("docs/reference/config-keys.md");
    const keys = acceptedConfigKeys();
    expect(keys.size).toBeGreaterThan(50);
    expect([...keys].filter((key) => !page.includes(`\`${key}\``)).sort()).toEqual([]);
  });
});
