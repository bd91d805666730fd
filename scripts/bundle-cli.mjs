#!/usr/bin/env node
// Bundles the CLI (after tsc) into dist/bin/mcplex.js, the package's `bin`. A client spawns
// `mcplex serve --stdio` for every session, and under Node's ESM loader each of the ~120
// modules a stdio start loads costs its own resolution, read and compile (the `yaml` library
// alone is 74 CommonJS files): one file for what every start needs, and one chunk per part a
// command loads lazily (`await import()` stays a chunk), start as fast with less (see
// bench/startup-bench.ts and "Start-up" in docs/DESIGN.md).
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
import { chmod, rm } from "node:fs/promises";
import { build } from "esbuild";

/** Packages on the start path of `mcplex serve`, bundled; every other one stays external. */
const BUNDLED = new Set(["yaml", "picomatch"]);

const root = new URL("..", import.meta.url).pathname;
const outdir = `${root}dist/bin`;

/** A bare specifier's package name: `@scope/name/sub` -> `@scope/name`, `name/sub` -> `name`. */
function packageName(specifier) {
  const parts = specifier.split("/");
  return specifier.startsWith("@") ? parts.slice(0, 2).join("/") : parts[0];
}

await rm(outdir, { recursive: true, force: true });
await build({
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
  // The CommonJS packages bundled require Node's own modules ("process", "buffer"), which an
  // ES module has no `require` for: esbuild's shim uses this one.
  banner: { js: 'import { createRequire as __createRequire } from "node:module"; const require = __createRequire(import.meta.url);' },
  plugins: [
    {
      name: "packages-outside",
      setup(build) {
        build.onResolve({ filter: /^[^./]/ }, (args) => {
          if (args.path.startsWith("node:") || BUNDLED.has(packageName(args.path))) return undefined;
          return { path: args.path, external: true };
        });
      },
    },
  ],
});
await chmod(`${outdir}/mcplex.js`, 0o755);
