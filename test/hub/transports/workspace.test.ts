/**
 * The transport contract over `workspace`: the built-in server, in process, linked to the hub
 * by an in-memory transport pair. Its surface is files, so the contract's calls are file reads:
 * one file per tag answers with its own text. It has no slow tool, so the progress, timeout and
 * abort parts of the contract are skipped by capability.
 */
import { mkdtempSync, realpathSync } from "node:fs";
import { rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import type { ServerConfig } from "../../../src/config/types.js";
import { SERVER_DEFAULTS } from "./fixture-contract.js";
import { CONTRACT_TAGS, transportContract } from "./transport-contract.case.js";

// Known when the suite is defined: the contract names the resource URI up front.
const root = realpathSync(mkdtempSync(join(tmpdir(), "mcplex-workspace-contract-")));
const content = (tag: string) => `the file of ${tag}\n`;

transportContract({
  label: "workspace: built-in server in process",
  protocolVersion: "2025-11-25",
  transport: "workspace",
  echo: { tool: "read_file", args: (tag) => ({ path: `${tag}.txt` }), text: (tag) => `the file of ${tag}` },
  toolError: { tool: "read_file", args: { path: "no-such-file.txt" } },
  resource: { uri: pathToFileURL(join(root, "hello.txt")).href, text: content("hello") },
  prompt: { name: "summarize_file", args: { path: "hello.txt" }, text: /Summarize hello\.txt/ },
  start: async () => {
    await Promise.all(CONTRACT_TAGS.map((tag) => writeFile(join(root, `${tag}.txt`), content(tag))));
    const server: ServerConfig = {
      ...SERVER_DEFAULTS,
      name: "workspace",
      transport: "workspace",
      root,
      allowWrite: false,
      rules: [],
    };
    return {
      server,
      // In process, with nothing spawned or listening: what it holds ends with the connection,
      // which the contract checks through the hub (stopped, calls refused).
      watchRelease: async () => async () => {},
      stop: () => rm(root, { recursive: true, force: true }),
    };
  },
});
