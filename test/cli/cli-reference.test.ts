import { readFile } from "node:fs/promises";
import { describe, expect, it } from "vitest";
import { CLI_REFERENCE_PATH, cliReference } from "../../src/cli/cli-reference.js";
import { ALL_DEFINITIONS } from "../../src/cli/definitions/all-definitions.js";
import { doctorDefinition } from "../../src/cli/definitions/doctor.js";
import { searchDefinition } from "../../src/cli/definitions/search.js";
import { serveDefinition } from "../../src/cli/definitions/serve.js";
import { workspaceDefinition } from "../../src/cli/definitions/workspace.js";
import { DEFAULT_PORT } from "../../src/fronts/http-guard.js";
import { DEFAULT_REGISTRY_URL } from "../../src/registry/registry-client.js";

describe("docs/reference/cli.md", () => {
  it("is what the command definitions generate (run `npm run docs:cli` after changing a command)", async () => {
    const written = await readFile(CLI_REFERENCE_PATH, "utf8");
    expect(written).toBe(cliReference(ALL_DEFINITIONS));
  });

  it("names every command, subcommand and flag", () => {
    const reference = cliReference(ALL_DEFINITIONS);
    for (const definition of ALL_DEFINITIONS.flatMap((d) => [d, ...(d.subcommands ?? [])])) {
      expect(reference).toContain(`mcplex ${definition.name}\n`);
      for (const flag of Object.keys(definition.flags)) expect(reference).toContain(`\`--${flag}`);
    }
  });

  it("shows the defaults the code applies", () => {
    for (const definition of [serveDefinition, workspaceDefinition, doctorDefinition])
      expect(definition.flags.port.defaultText, definition.name).toBe(String(DEFAULT_PORT));
    expect(searchDefinition.flags.registry.defaultText).toBe(DEFAULT_REGISTRY_URL);
  });
});
