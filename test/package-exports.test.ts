import { execFileSync } from "node:child_process";
import { describe, expect, it } from "vitest";

// The published entry points, imported by name as a user would (Node resolves the
// package's own name through its `exports`), from the build.
describe("package exports", () => {
  it.each([
    ["mcplex", ["Hub", "loadConfig", "Catalog", "LocalServer", "McplexError", "SecretStore"]],
    ["mcplex/agent", ["runAgent", "ChatClient", "startMockLlmServer"]],
    ["mcplex/gateway", ["Gateway", "startHttpFront", "serveGatewayStdio"]],
    ["mcplex/workspace", ["createWorkspaceServer", "serveWorkspaceStdio"]],
  ] as const)("%s exports its API", (specifier, names) => {
    const script = `import(${JSON.stringify(specifier)}).then((m) => console.log(JSON.stringify(Object.keys(m))))`;
    const keys = JSON.parse(
      execFileSync(process.execPath, ["--input-type=module", "-e", script], { encoding: "utf8" }),
    ) as string[];
    for (const name of names) expect(keys).toContain(name);
  });
});
