import { execFile } from "node:child_process";
import { copyFile, mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { delimiter, dirname, join, resolve } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { NODE_22 } from "../support/node22.js";

// `npm install` warns EBADENGINE for every installed package whose `engines` refuses the Node
// it runs on. `engines` must admit no Node on which that happens: here the two a contributor
// has, the system Node 20 and the Node 22 `pretest` fetches. A dry run resolves the same tree
// from package-lock.json and checks the same engines, without writing node_modules.

const run = promisify(execFile);
const repo = resolve(import.meta.dirname, "../..");
const cleanEnv = Object.fromEntries(Object.entries(process.env).filter(([key]) => !/^npm_/i.test(key)));

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "mcplex-engines-"));
  for (const file of ["package.json", "package-lock.json"]) await copyFile(join(repo, file), join(dir, file));
});
afterAll(async () => {
  if (dir !== undefined) await rm(dir, { recursive: true, force: true });
});

/** What `npm install` prints on the Node whose binary is `node` (npm runs on the first in PATH). */
async function installOutput(node: string): Promise<string> {
  const { stdout, stderr } = await run(
    "npm",
    ["install", "--dry-run", "--ignore-scripts", "--prefer-offline", "--no-audit", "--no-fund"],
    { cwd: dir, env: { ...cleanEnv, PATH: `${dirname(node)}${delimiter}${cleanEnv.PATH ?? ""}` } },
  );
  return stdout + stderr;
}

describe("npm install", () => {
  it.each([
    ["this Node", process.execPath],
    ["Node 22", NODE_22],
  ])("warns of no engine on %s, which engines admits", async (_, node) => {
    const warnings = (await installOutput(node)).split("\n").filter((line) => line.includes("EBADENGINE"));
    expect(warnings).toEqual([]);
    const { stdout: version } = await run(node, ["--version"]);
    const { engines } = JSON.parse(await readFile(join(repo, "package.json"), "utf8")) as {
      engines: { node: string };
    };
    // The admitted lines as engines writes them: ^20.19.0 || >=22.12.0.
    const [major, minor] = version.trim().slice(1).split(".").map(Number) as [number, number];
    expect(engines.node).toBe("^20.19.0 || >=22.12.0");
    expect((major === 20 && minor >= 19) || major > 22 || (major === 22 && minor >= 12)).toBe(true);
  });
});
