#!/usr/bin/env node
/**
 * Minimal entry: `node dist/workspace/stdio-main.js --root DIR [--allow-write] [--rule GLOB=OPS]...` serves the
 * workspace over stdio. The `mcplex workspace` CLI command is the user-facing way; this one
 * exists for tests and for embedding without the CLI. Errors go to stderr, never stdout.
 */
import { parseArgs } from "node:util";
import { serveWorkspaceStdio } from "./stdio.js";

const { values } = parseArgs({
  options: {
    root: { type: "string" },
    "allow-write": { type: "boolean", default: false },
    // `--rule "out/**=read,write"`, repeatable; `--rule "secret/**="` denies.
    rule: { type: "string", multiple: true, default: [] },
  },
  strict: true,
});
const rules = (values.rule ?? []).map((spec) => {
  const eq = spec.lastIndexOf("=");
  const ops = spec
    .slice(eq + 1)
    .split(",")
    .filter((op): op is "read" | "write" => op === "read" || op === "write");
  return { pattern: spec.slice(0, eq), ops };
});
const root = values.root ?? process.cwd();
serveWorkspaceStdio({
  root,
  allowWrite: values["allow-write"] ?? false,
  rules,
  onerror: (error) => process.stderr.write(`mcplex workspace: ${error.message}\n`),
});
