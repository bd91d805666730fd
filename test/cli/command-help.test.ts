import { describe, expect, it } from "vitest";
import type { CommandDefinition } from "../../src/cli/command-definition.js";
import { ALL_DEFINITIONS } from "../../src/cli/definitions/all-definitions.js";
import { runCli } from "../support/cli.js";

/** Every command and subcommand, by the words that run it. */
const COMMANDS: CommandDefinition[] = ALL_DEFINITIONS.flatMap((d) => [d, ...(d.subcommands ?? [])]);

/** The long flags a help text lists under "Flags:". */
function listedFlags(help: string): string[] {
  const section = help.split("\nFlags:\n")[1]?.split("\n\n")[0] ?? "";
  return section
    .split("\n")
    .map((line) => /--([a-z-]+)/.exec(line)?.[1])
    .filter((flag): flag is string => flag !== undefined);
}

describe("mcplex <command> --help", () => {
  it.each(COMMANDS.map((d) => [d.name, d] as const))(
    "%s: its usage line, its own flags and no other's, and an example",
    async (name, definition) => {
      const { code, stdout } = await runCli([...name.split(" "), "--help"]);
      expect(code).toBe(0);
      expect(stdout).toContain(`Usage: ${definition.usage}`);
      expect(listedFlags(stdout).sort()).toEqual(Object.keys(definition.flags).sort());
      expect(stdout).toContain("Examples:");
      expect(stdout).toContain(definition.examples[0]!.command);
    },
  );

  it("prints serve's flags with their descriptions and defaults, not the whole CLI's help", async () => {
    const { stdout } = await runCli(["serve", "--help"]);
    expect(stdout).toMatch(/^ {6}--port P +the port to listen on .*\(default: 8420\)$/m);
    expect(stdout).not.toContain("mcplex secrets");
    expect(stdout).not.toContain("--registry");
  });

  it("prints the same for -h and for mcplex help <command>", async () => {
    const help = (await runCli(["serve", "--help"])).stdout;
    expect((await runCli(["serve", "-h"])).stdout).toBe(help);
    expect((await runCli(["help", "serve"])).stdout).toBe(help);
    const check = (await runCli(["config", "check", "--help"])).stdout;
    expect((await runCli(["help", "config", "check"])).stdout).toBe(check);
  });

  it("lists a group's subcommands at the group's level", async () => {
    const { code, stdout } = await runCli(["secrets", "--help"]);
    expect(code).toBe(0);
    expect(stdout).toMatch(/^ {2}mcplex secrets set +store a secret/m);
    expect(stdout).toMatch(/^ {2}mcplex secrets list /m);
    expect(stdout).toMatch(/^ {2}mcplex secrets rm /m);
  });

  it("keeps the overview for mcplex --help: every command, one usage line and summary each", async () => {
    const { code, stdout } = await runCli(["--help"]);
    expect(code).toBe(0);
    for (const definition of ALL_DEFINITIONS) {
      expect(stdout).toContain(`  ${definition.usage}\n      ${definition.summary}\n`);
    }
    expect(stdout).not.toContain("Flags:");
  });
});

describe("mistyped names", () => {
  it("names an unknown flag and the command's nearest flag, exit 2", async () => {
    const { code, stderr } = await runCli(["serve", "--prot", "9000"]);
    expect(code).toBe(2);
    expect(stderr).toMatch(/^mcplex: serve: Unknown option '--prot'; did you mean --port\?$/m);
    expect(stderr).toContain('hint: run "mcplex serve --help" for usage');
  });

  it("suggests among the flags of that subcommand", async () => {
    const { code, stderr } = await runCli(["config", "check", "--jsn"]);
    expect(code).toBe(2);
    expect(stderr).toMatch(/config check: Unknown option '--jsn'; did you mean --json\?/);
    expect(stderr).toContain('hint: run "mcplex config check --help" for usage');
  });

  it("suggests nothing for a flag far from every one the command has", async () => {
    const { code, stderr } = await runCli(["list", "--frobnicate"]);
    expect(code).toBe(2);
    expect(stderr).toMatch(/list: Unknown option '--frobnicate'/);
    expect(stderr).not.toContain("did you mean");
  });

  it("names an unknown command and the nearest command, exit 2", async () => {
    const { code, stderr } = await runCli(["serv", "--port", "9000"]);
    expect(code).toBe(2);
    expect(stderr).toMatch(/unknown command "serv"; did you mean serve\?/);
    const help = await runCli(["help", "conig"]);
    expect(help.code).toBe(2);
    expect(help.stderr).toMatch(/unknown command "conig"; did you mean config\?/);
  });
});
