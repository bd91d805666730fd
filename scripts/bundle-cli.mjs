#!/usr/bin/env node
// Bundles the CLI (after tsc) into dist/bin/mcplex.js, the package's `bin`. A client spawns
// `mcplex serve --stdio` for every session, and under Node's ESM loader each of the ~120
// modules a stdio start loads costs its own resolution, read and compile (the `yaml` library
// alone is 74 CommonJS files): a few files for what a start needs, one per stage of it
// (STAGES), and chunks for what a command loads lazily (`await import()`), start as fast with
// less (see bench/startup-bench.ts and "Start-up" in docs/DESIGN.md).
//
// - The input is tsc's output (dist/), so the bundle runs the code the library ships.
// - Everything lands flat in dist/bin/, one folder below dist/ as dist/<concept>/ is: the paths
//   our modules find beside themselves (`new URL("../../web/dashboard/", import.meta.url)`,
//   `./sandbox-worker.js`, an entry of its own here) point to the same files from a chunk.
// - Packages stay imports of node_modules, resolved as the library resolves them, except those
//   a stdio start loads that bundle cleanly (BUNDLED); some could not be bundled at all
//   (QuickJS finds its .wasm beside its own module).
// - dist/cli/main.js (tsc's) still runs the same CLI unbundled.
//
//   node scripts/bundle-cli.mjs   (run by `npm run build`)
import { chmod, mkdir, rm, writeFile } from "node:fs/promises";
import { build } from "esbuild";

/** Packages on the start path of `mcplex serve`, bundled; every other one stays external. */
const BUNDLED = new Set(["yaml", "picomatch"]);

/**
 * The stages of a stdio start, each named by the modules it starts from (paths in dist/): all
 * that these import statically, and nothing an earlier stage has, is one chunk, which loads
 * whole. esbuild's code splitting makes a chunk of each set of entry points (here: every
 * `await import()`) that share a module, and does not merge one its importer has already loaded
 * (evanw/esbuild#3780): the path had become 56 files, and each file costs Node's ESM loader its
 * resolution, read, compile and link, about 0.8M instructions (so many that V8 optimised the
 * loader's URL code). Another command that imports a module of a stage loads that stage too:
 * `mcplex list` loads the gateway's code with the hub's.
 */
const STAGES = {
  // What every command loads: the CLI's output and errors, its flag parser (and the flag two
  // commands share, with the code that reads it).
  cli: [
    "cli/main.js",
    "cli/parse-command-args.js",
    "cli/definitions/expose-tool-flag.js",
    "cli/commands/expose-tool-flag.js",
  ],
  // Before the servers spawn: the serve command, its flags and the config.
  "serve-start": ["cli/commands/serve.js"],
  // Once they are spawned: what serve() always loads to serve them over stdio.
  "serve-stdio": [
    "assembly/serve.js",
    "cli/oauth-login.js",
    "config/check-config.js",
    "servers/tool-lists.js",
    "gateway/gateway.js",
    "catalog-modes/view-resolver.js",
    "catalog-modes/view-engines.js",
    "catalog-modes/available-tool-entries.js",
    "fronts/stdio-front.js",
  ],
};

/**
 * Starts whose modules no stage after the first takes, so that they load none of those chunks:
 * the sandbox worker (a thread of its own, that code mode starts) and `mcplex workspace` (which a
 * client may spawn for every session too, and which shares a few modules with the serve
 * command).
 */
const KEPT_APART = ["code-mode/sandbox-worker.js", "cli/commands/workspace.js"];

/**
 * esbuild's shim for `require` in the CommonJS packages bundled (they require Node's own
 * modules, "process", "buffer"): an ES module has none, so the chunk that defines the shim gets
 * this one, and no other chunk pays for it.
 */
const REQUIRE_BANNER =
  'import { createRequire as __createRequire } from "node:module"; const require = __createRequire(import.meta.url);';

/**
 * yaml as ES modules (its build for other platforms than Node, `exports` "default"): the same
 * parser, and esbuild leaves out what parsing does not reach, where its CommonJS build for Node
 * is bundled whole and wrapped (314 KB -> 250 KB, with the config's code; 19M fewer
 * instructions before the servers spawn). What differs does not reach a config: a warning is
 * printed with console.warn instead of process.emitWarning, and `!!binary` decodes with atob.
 */
const YAML_ESM = new URL("browser/index.js", import.meta.resolve("yaml/package.json")).pathname;

const root = new URL("..", import.meta.url).pathname;
const outdir = `${root}dist/bin`;

/** A bare specifier's package name: `@scope/name/sub` -> `@scope/name`, `name/sub` -> `name`. */
function packageName(specifier) {
  const parts = specifier.split("/");
  return specifier.startsWith("@") ? parts.slice(0, 2).join("/") : parts[0];
}

/** Keeps packages outside the bundle, except {@link BUNDLED}. */
const packagesOutside = {
  name: "packages-outside",
  setup(build) {
    build.onResolve({ filter: /^[^./]/ }, (args) => {
      if (args.path.startsWith("node:")) return undefined;
      if (args.path === "yaml") return { path: YAML_ESM };
      if (BUNDLED.has(packageName(args.path))) return undefined;
      return { path: args.path, external: true };
    });
  },
};

const options = {
  absWorkingDir: root,
  entryPoints: { mcplex: "dist/cli/main.js", "sandbox-worker": "dist/code-mode/sandbox-worker.js" },
  outdir,
  bundle: true,
  splitting: true,
  format: "esm",
  platform: "node",
  target: "node20",
  sourcemap: "linked",
  // As tsc's maps: they point to src/, and do not carry it.
  sourcesContent: false,
  logLevel: "warning",
};

/** The modules of each stage by its name (absolute paths), from the import graph of a first build. */
async function stageModules() {
  const { metafile } = await build({ ...options, write: false, metafile: true, plugins: [packagesOutside] });
  const entries = Object.values(options.entryPoints);
  // Our modules that `starts` import statically, each after those it imports: the stage's
  // module then evaluates them in the order they would evaluate without it.
  const closure = (starts) => {
    const order = [];
    const seen = new Set();
    const visit = (path) => {
      if (seen.has(path) || !path.startsWith("dist/")) return;
      seen.add(path);
      for (const i of metafile.inputs[path]?.imports ?? []) if (i.kind === "import-statement") visit(i.path);
      order.push(path);
    };
    for (const start of starts) visit(start);
    return order;
  };
  // The entry points run when loaded: never part of a stage.
  const taken = new Set(entries);
  const stages = new Map();
  for (const [name, starts] of Object.entries(STAGES)) {
    const members = closure(starts.map((s) => `dist/${s}`)).filter((m) => !taken.has(m));
    for (const m of members) taken.add(m);
    stages.set(name, members.map((m) => `${root}${m}`));
    // Every command loads the first stage: what comes after keeps apart from KEPT_APART's.
    if (stages.size === 1) for (const m of closure(KEPT_APART.map((s) => `dist/${s}`))) taken.add(m);
  }
  return stages;
}

/**
 * Makes each stage one chunk: an import of a stage's module from outside it (or any `import()`
 * of it) imports the stage's module instead, which re-exports all of the stage's modules (their
 * exports are unique within a stage), so that esbuild sees every one of them reached from the
 * same entry points.
 */
function stagesAsChunks(stages) {
  const stageOf = new Map([...stages].flatMap(([name, members]) => members.map((m) => [m, name])));
  return {
    name: "stages-as-chunks",
    setup(build) {
      build.onResolve({ filter: /^\./ }, (args) => {
        const stage = stageOf.get(new URL(args.path, `file://${args.resolveDir}/`).pathname);
        if (stage === undefined) return undefined;
        if (stageOf.get(args.importer) === stage && args.kind !== "dynamic-import") return undefined;
        // A stage that a dynamic import reaches is an entry point, of this name.
        return { path: stage, namespace: "stage" };
      });
      build.onLoad({ filter: /.*/, namespace: "stage" }, (args) => {
        const members = stages.get(args.path);
        return {
          contents: members.map((m) => `export * from ${JSON.stringify(m)};`).join("\n"),
          resolveDir: root,
          loader: "js",
        };
      });
    },
  };
}

await rm(outdir, { recursive: true, force: true });
await mkdir(outdir, { recursive: true });
const stages = await stageModules();
const { outputFiles } = await build({
  ...options,
  write: false,
  banner: { js: REQUIRE_BANNER },
  plugins: [stagesAsChunks(stages), packagesOutside],
});
for (const file of outputFiles) {
  let text = file.text;
  if (file.path.endsWith(".js") && !/\b__require\s*=/.test(text)) {
    // Replaced by a blank line: the source map's lines stay where they were.
    text = text.replace(REQUIRE_BANNER, "");
  }
  await writeFile(file.path, text);
}
await chmod(`${outdir}/mcplex.js`, 0o755);
