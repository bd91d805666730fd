import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import {
  isImportOverride,
  LAYERS_DOC,
  layeringOverrides,
  readLayerTable,
  unitOf,
} from "../scripts/layer-table.js";
import { importEdges, importsOfText, sourceFiles } from "../scripts/source-imports.js";

// The layering of src/ is docs/design/layers.md's table: what each folder may import. This test
// holds the tree to it, every import counted (static, type-only, `import()`); biome's rules,
// generated from the same table, hold an editor to it.
const table = readLayerTable(readFileSync(LAYERS_DOC, "utf8"));
const units = [...table.mayImport.keys()];

/**
 * The imports that run against the table, file to file, as `from.ts -> to.ts` (paths under
 * src/): an arrow from a folder to one its line does not list. Those still tolerated are the
 * table's `upward-arrows` block, a list that may only shrink.
 */
function findUpwardArrows(): string[] {
  const arrows = new Set<string>();
  for (const { from, to } of importEdges()) {
    const [a, b] = [unitOf(from), unitOf(to)];
    if (a !== b && !(table.mayImport.get(a) ?? []).includes(b)) arrows.add(`${from} -> ${to}`);
  }
  return [...arrows].sort();
}

describe("the layer table", () => {
  const arrows = findUpwardArrows();

  it("reads every kind of import: static, type-only, re-export and import()", () => {
    const source = [
      'import type { A } from "./a.js";',
      'import { type B, type C } from "./b.js";',
      'import { type D, e } from "./d.js";',
      'import "./side.js";',
      'export { f } from "./f.js";',
      'export type { G } from "./g.js";',
      'let h: import("./h.js").H;',
      'const i = await import("./i.js");',
      "const j = Array.from([h, i, e]);",
    ].join("\n");
    expect(importsOfText(source)).toEqual([
      { specifier: "./a.js", kind: "type" },
      { specifier: "./b.js", kind: "type" },
      { specifier: "./d.js", kind: "static" },
      { specifier: "./side.js", kind: "static" },
      { specifier: "./f.js", kind: "static" },
      { specifier: "./g.js", kind: "type" },
      { specifier: "./h.js", kind: "type" },
      { specifier: "./i.js", kind: "dynamic" },
    ]);
  });

  it("has a line for every folder of src/, and names no folder it has no line for", () => {
    const inTree = [...new Set(sourceFiles().map(unitOf))];
    expect(
      inTree.filter((unit) => !table.mayImport.has(unit)),
      `add them to ${LAYERS_DOC}`,
    ).toEqual([]);
    const named = [...table.mayImport.values()].flat();
    expect(named.filter((unit) => !table.mayImport.has(unit))).toEqual([]);
  });

  it("draws every folder of the table once in the picture", () => {
    const drawn = table.rows.flat();
    expect([...drawn].sort()).toEqual([...units].sort());
  });

  it("is a layering: a folder may import only folders drawn below it", () => {
    const row = (unit: string) => table.rows.findIndex((names) => names.includes(unit));
    const upward = units.flatMap((unit) =>
      (table.mayImport.get(unit) ?? [])
        .filter((target) => row(target) <= row(unit))
        .map((t) => `${unit} -> ${t}`),
    );
    expect(upward).toEqual([]);
  });

  it("finds no import in src/ that runs against the table but the known ones", () => {
    const unknown = arrows.filter((arrow) => !table.upwardArrows.includes(arrow));
    expect(unknown, `imports that run against ${LAYERS_DOC}:\n${unknown.join("\n")}`).toEqual([]);
  });

  it("keeps the list of known upward imports honest: each one is still in the tree", () => {
    const gone = table.upwardArrows.filter((arrow) => !arrows.includes(arrow));
    expect(
      gone,
      `gone: remove them from ${LAYERS_DOC}'s upward-arrows, then run npm run lint:layers`,
    ).toEqual([]);
  });

  it("is what biome.json's layering rules say (npm run lint:layers writes them)", () => {
    const biome = JSON.parse(readFileSync("biome.json", "utf8")) as { overrides?: unknown[] };
    const written = (biome.overrides ?? []).filter(isImportOverride);
    expect(written, "biome.json differs from the table: run npm run lint:layers").toEqual(
      layeringOverrides(table),
    );
  });
});
