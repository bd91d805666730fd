/**
 * The generated tree of bench/workspace-search.ts: 20,000 files, about 200 MB, the same bytes on
 * every machine (seeded PRNG). Mostly source-like text in nested packages, some binaries,
 * gitignored `node_modules/`, `build/` and `*.log`, a few big files that span several read
 * windows, and a needle at known places (some of them ignored or binary on purpose).
 */
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { rng } from "../test/support/rng.js";

/** Bumped whenever the generator changes, so a stale tree is never reused. */
const VERSION = 1;

/** The literal the bench searches for; no generated word contains it. */
export const NEEDLE = "zqxNeedle_4711";

/** Where a needle was put and whether a search with our default semantics should find it. */
export interface NeedlePlace {
  path: string;
  /** 1-based line. */
  line: number;
  /** False for needles in gitignored or binary files. */
  expected: boolean;
  why: string;
}

/** What {@link ensureTree} made, written next to the tree as its marker. */
export interface TreeManifest {
  version: number;
  root: string;
  files: number;
  bytes: number;
  binaryFiles: number;
  ignoredFiles: number;
  needles: NeedlePlace[];
  /** Directory names and globs that the root `.gitignore` lists, for grep's `--exclude*` flags. */
  ignoredDirs: string[];
  ignoredGlobs: string[];
}

const FILES = 20_000;
const TOTAL_BYTES = 200_000_000;
const BIG_FILES = 20;
const WINDOW = 1024 * 1024;

/** The default place: `$TMPDIR/mcplex-bench-workspace-v1/{tree,manifest.json}`. */
export function defaultTreeDir(): string {
  return path.join(os.tmpdir(), `mcplex-bench-workspace-v${VERSION}`);
}

/** Remove the tree (and its marker). */
export function removeTree(dir = defaultTreeDir()): void {
  rmSync(dir, { recursive: true, force: true });
}

/** The tree's manifest, generating the tree first unless a complete one is already there. */
export function ensureTree(dir = defaultTreeDir(), log: (line: string) => void = () => {}): TreeManifest {
  const marker = path.join(dir, "manifest.json");
  if (existsSync(marker)) {
    const manifest = JSON.parse(readFileSync(marker, "utf8")) as TreeManifest;
    if (manifest.version === VERSION) return manifest;
  }
  // A half-written tree (interrupted run) has no marker: start over.
  removeTree(dir);
  const t = performance.now();
  log(`generating ${FILES} files (~${TOTAL_BYTES / 1e6} MB) under ${dir} ...`);
  const manifest = generate(path.join(dir, "tree"));
  writeFileSync(marker, JSON.stringify(manifest, null, 2));
  log(`generated in ${((performance.now() - t) / 1000).toFixed(1)} s`);
  return manifest;
}

const WORDS = (
  "const let return function import export from async await value result options config server " +
  "client request response handler error message buffer stream path file index count limit " +
  "offset length items entry state context signal timeout retry cache token session user data " +
  "node child parent list map set get update delete create close open read write parse format"
).split(" ");
const TEMPLATES = [
  (w: string[]) => `const ${w[0]}_${w[1]} = ${w[2]}(${w[3]}, ${w[4]});`,
  (w: string[]) => `if (${w[0]}.${w[1]} === undefined) return ${w[2]};`,
  (w: string[]) => `// ${w[0]} the ${w[1]} before ${w[2]} so that ${w[3]} keeps its ${w[4]}`,
  (w: string[]) => `export async function ${w[0]}${w[1]}(${w[2]}: ${w[3]}): Promise<${w[4]}> {`,
  (w: string[]) => `  ${w[0]}.${w[1]}(${JSON.stringify(w[2])}, ${w[3]}.${w[4]});`,
  () => "}",
  (w: string[]) => `import { ${w[0]}, ${w[1]} } from "./${w[2]}-${w[3]}.js";`,
  (w: string[]) => `  "${w[0]}": { "${w[1]}": ${w.length * 17}, "${w[2]}": "${w[3]} ${w[4]}" },`,
];
const EXTENSIONS = [".ts", ".ts", ".ts", ".js", ".json", ".md", ".py", ".go", ".txt"];

function makeLinePool(rand: () => number): string[] {
  const pick = () => WORDS[Math.floor(rand() * WORDS.length)]!;
  return Array.from({ length: 1 << 16 }, () => {
    const words = [pick(), pick(), pick(), pick(), pick()];
    const indent = "  ".repeat(Math.floor(rand() * 4));
    return indent + TEMPLATES[Math.floor(rand() * TEMPLATES.length)]!(words);
  });
}

/** ASCII text of at least `size` bytes made of pool lines, as an array of lines. */
function textLines(rand: () => number, pool: string[], size: number): string[] {
  const lines: string[] = [];
  let n = 0;
  while (n < size) {
    const line = pool[Math.floor(rand() * pool.length)]!;
    lines.push(line);
    n += line.length + 1;
  }
  return lines;
}

interface Planned {
  rel: string;
  size: number;
  kind: "text" | "binary" | "big";
  ignored: boolean;
}

function plan(rand: () => number): Planned[] {
  const dirs: string[] = [];
  for (let i = 0; i < 20; i++) {
    for (let j = 0; j < 5; j++) {
      dirs.push(`pkg${i}/src/m${j}`);
      for (let k = 0; k < 4; k++) dirs.push(`pkg${i}/src/m${j}/d${k}`, `pkg${i}/src/m${j}/d${k}/deep/er`);
    }
    dirs.push(`pkg${i}/test`, `pkg${i}/docs`);
  }
  const ignoredDirs = Array.from({ length: 20 }, (_, i) => [
    `pkg${i}/node_modules/dep-a/lib`,
    `pkg${i}/node_modules/dep-b`,
    `pkg${i}/build`,
  ]).flat();
  const files: Planned[] = [];
  for (let n = 0; n < FILES; n++) {
    const r = rand();
    const ignored = r < 0.1;
    const binary = !ignored && r > 0.97;
    const dir = ignored
      ? ignoredDirs[Math.floor(rand() * ignoredDirs.length)]!
      : dirs[Math.floor(rand() * dirs.length)]!;
    const ext = binary
      ? ".bin"
      : ignored && rand() < 0.2
        ? ".log"
        : EXTENSIONS[Math.floor(rand() * EXTENSIONS.length)]!;
    // An exponential spread of sizes, scaled to the total below.
    const weight = -Math.log(1 - rand() * 0.999);
    files.push({ rel: `${dir}/f${n}${ext}`, size: weight, kind: binary ? "binary" : "text", ignored });
  }
  // Big files that cross read windows: spread over the non-ignored text ones.
  for (let b = 0; b < BIG_FILES; b++) {
    const f = files[b * 997 + 13]!;
    if (f.kind === "text" && !f.ignored) {
      f.kind = "big";
      f.size = 0;
    }
  }
  const bigBytes = files.filter((f) => f.kind === "big").length * 2.5 * WINDOW;
  const weights = files.reduce((s, f) => s + (f.kind === "big" ? 0 : f.size), 0);
  for (const f of files) {
    f.size =
      f.kind === "big"
        ? Math.floor((1.2 + 2.6 * rand()) * WINDOW)
        : Math.max(64, Math.floor((f.size / weights) * (TOTAL_BYTES - bigBytes)));
  }
  return files;
}

function generate(root: string): TreeManifest {
  const rand = rng(0x5eed);
  const pool = makeLinePool(rand);
  const files = plan(rand);
  const needles: NeedlePlace[] = [];
  const ignoredDirs = ["node_modules", "build"];
  const ignoredGlobs = ["*.log"];
  mkdirSync(root, { recursive: true });
  writeFileSync(path.join(root, ".gitignore"), `${ignoredDirs.map((d) => `${d}/`).join("\n")}\n*.log\n`);

  // Needle plans by file index, chosen among files of the right kind.
  const firstOf = (pred: (f: Planned) => boolean, from: number) => {
    for (let i = from; i < files.length; i++) if (pred(files[i]!)) return i;
    throw new Error("no file fits a needle");
  };
  const plainText = (f: Planned) => f.kind === "text" && !f.ignored && !f.rel.endsWith(".log");
  const special = new Map<number, string>();
  special.set(firstOf(plainText, 0), "line-1");
  special.set(firstOf(plainText, 1000), "last-line-no-newline");
  special.set(firstOf(plainText, 2000), "two-on-one-line");
  special.set(firstOf(plainText, 3000), "crlf");
  special.set(firstOf(plainText, 4000), "after-multibyte");
  special.set(
    firstOf((f) => plainText(f) && f.rel.includes("/deep/"), 5000),
    "deep",
  );
  const boundary = firstOf((f) => f.kind === "big", 0);
  special.set(boundary, "window-boundary");
  special.set(
    firstOf((f) => f.kind === "big" && f.size > 2.2 * WINDOW, boundary + 1),
    "third-window",
  );
  special.set(
    firstOf((f) => f.ignored && f.rel.includes("node_modules"), 0),
    "node_modules",
  );
  special.set(
    firstOf((f) => f.ignored && f.rel.endsWith(".log"), 0),
    "log",
  );
  special.set(
    firstOf((f) => f.kind === "binary", 0),
    "binary",
  );

  let bytes = 0;
  const made = new Set<string>();
  files.forEach((f, index) => {
    const dir = path.join(root, path.dirname(f.rel));
    if (!made.has(dir)) {
      mkdirSync(dir, { recursive: true });
      made.add(dir);
    }
    const place = special.get(index);
    let content: string | Buffer;
    if (f.kind === "binary") {
      const buf = Buffer.allocUnsafe(f.size);
      for (let i = 0; i < buf.length; i++) buf[i] = (rand() * 256) | 0;
      buf[Math.min(16, buf.length - 1)] = 0;
      if (place !== undefined) buf.write(` ${NEEDLE} `, Math.floor(buf.length / 2), "latin1");
      content = buf;
      if (place !== undefined) needles.push({ path: f.rel, line: 0, expected: false, why: place });
    } else {
      const lines = textLines(rand, pool, f.size);
      if (place !== undefined) {
        const at = placeNeedle(place, lines);
        needles.push({ path: f.rel, line: at + 1, expected: !f.ignored, why: place });
      }
      const eol = place === "crlf" ? "\r\n" : "\n";
      content = lines.join(eol) + (place === "last-line-no-newline" ? "" : eol);
    }
    writeFileSync(path.join(root, f.rel), content);
    bytes += Buffer.byteLength(content);
  });
  return {
    version: VERSION,
    root,
    files: files.length + 1,
    bytes,
    binaryFiles: files.filter((f) => f.kind === "binary").length,
    ignoredFiles: files.filter((f) => f.ignored).length,
    needles,
    ignoredDirs,
    ignoredGlobs,
  };
}

/** Put the needle into `lines` as `why` says; returns the 0-based line it is on. */
function placeNeedle(why: string, lines: string[]): number {
  switch (why) {
    case "last-line-no-newline":
      lines.push(`// end ${NEEDLE}`);
      return lines.length - 1;
    case "two-on-one-line":
      lines.splice(7, 0, `const a = "${NEEDLE}" + "${NEEDLE}";`);
      return 7;
    case "after-multibyte":
      lines.splice(3, 0, `// ünïcödé — 日本語 ${NEEDLE}`);
      return 3;
    case "window-boundary":
    case "third-window": {
      // Split the needle across the 1 MiB read window (or sit in the third one): lines are ASCII,
      // so characters are bytes.
      const target = why === "window-boundary" ? WINDOW - 5 : 2 * WINDOW + 4096;
      let offset = 0;
      let i = 0;
      while (offset + lines[i]!.length + 1 <= target - 40) offset += lines[i++]!.length + 1;
      const pad = "/".repeat(target - offset);
      lines.splice(i, 0, `${pad}${NEEDLE} spans the window`);
      return i;
    }
    default:
      lines.splice(Math.min(lines.length, why === "line-1" ? 0 : 11), 0, `// TODO(${NEEDLE}) ${why}`);
      return why === "line-1" ? 0 : Math.min(lines.length - 1, 11);
  }
}
