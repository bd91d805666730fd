/**
 * `npm run lint:layers`: writes biome.json's `noRestrictedImports` overrides from the table in
 * docs/design/layers.md (every other part of biome.json is kept as it is), then formats it.
 * `npm run lint:layers -- --matrix` prints instead which folder of src/ imports which today, with
 * how (s: static, t: type-only, d: `import()`), and the arrows the table does not allow.
 */
import { execFileSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { isImportOverride, LAYERS_DOC, layeringOverrides, readLayerTable, unitOf } from "./layer-table.js";
import { importEdges } from "./source-imports.js";

const table = readLayerTable(readFileSync(LAYERS_DOC, "utf8"));

if (process.argv.includes("--matrix")) printMatrix();
else writeRules();

function writeRules(): void {
  const config = JSON.parse(readFileSync("biome.json", "utf8")) as { overrides?: unknown[] };
  const kept = (config.overrides ?? []).filter((entry) => !isImportOverride(entry));
  config.overrides = [...kept, ...layeringOverrides(table)];
  writeFileSync("biome.json", `${JSON.stringify(config, null, 2)}\n`);
  execFileSync("node_modules/.bin/biome", ["format", "--write", "biome.json"], { stdio: "inherit" });
}

function printMatrix(): void {
  const matrix = new Map<string, Map<string, Set<string>>>();
  const upward: string[] = [];
  for (const { from, to, kind } of importEdges()) {
    const [a, b] = [unitOf(from), unitOf(to)];
    if (a === b) continue;
    const row = matrix.get(a) ?? new Map<string, Set<string>>();
    row.set(b, (row.get(b) ?? new Set()).add(kind[0]!));
    matrix.set(a, row);
    if (!(table.mayImport.get(a) ?? []).includes(b)) upward.push(`${kind.padEnd(7)} ${from} -> ${to}`);
  }
  for (const a of [...matrix.keys()].sort()) {
    const cells = [...matrix.get(a)!].sort(([x], [y]) => (x < y ? -1 : 1));
    console.log(`${a.padEnd(14)} ${cells.map(([b, kinds]) => `${b}(${[...kinds].sort().join("")})`).join(" ")}`);
  }
  console.log(`\nArrows ${LAYERS_DOC} does not allow:\n${upward.join("\n") || "(none)"}`);
}
