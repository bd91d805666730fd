import { execFileSync } from "node:child_process";
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, describe, expect, it } from "vitest";

const biome = resolve("node_modules/.bin/biome");
const dir = mkdtempSync(join(tmpdir(), "mcplex-code-mode-layers-"));
copyFileSync("biome.json", join(dir, "biome.json"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Lints a file of src/code-mode/ importing `from`, under a copy of the project's lint config. */
function lint(from: string): string {
  const file = join(dir, "src/code-mode/part.ts");
  mkdirSync(join(file, ".."), { recursive: true });
  writeFileSync(file, `import { thing } from "${from}";\n\nexport const used = thing;\n`);
  try {
    execFileSync(biome, ["lint", "src/code-mode/part.ts"], { cwd: dir, encoding: "utf8", stdio: "pipe" });
    return "";
  } catch (error) {
    const e = error as { stdout?: string; stderr?: string };
    return `${e.stdout ?? ""}${e.stderr ?? ""}`;
  }
}

// Code mode is wired into the gateway, never the other way: it imports only src/errors.ts.
describe("code-mode layering", () => {
  it.each([
    "../hub/hub.js",
    "../gateway/gateway.js",
    "../catalog/index.js",
    "../protocol/rpc-connection.js",
    "../agent/index.js",
  ])("src/code-mode/ may not import %s", (from) => {
    expect(lint(from)).toContain("Layering: src/code-mode/ may import only errors.ts of src/");
  });

  it("src/code-mode/ may import src/errors.ts", () => {
    expect(lint("../errors.js")).not.toContain("Layering");
  });
});
