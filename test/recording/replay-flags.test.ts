import { describe, expect, it } from "vitest";
import { runCli } from "../support/cli.js";

describe("the command-line checks of replay and serve flags", () => {
  it.each([
    [["replay"], "replay takes one subcommand, verify"],
    [["replay", "verify"], "replay verify needs one FILE"],
    [["replay", "verify", "x.jsonl"], "replay verify needs --server NAME"],
    [["serve", "--seed", "3"], "--seed and --speed are for --simulate"],
    [["serve", "--simulate", "--seed", "x"], "--seed must be a whole number"],
    [["serve", "--simulate", "--speed=-2"], "--speed must be a number of 0 or more"],
  ])("mcplex %j is refused with a usage error", async (args, message) => {
    const { code, stderr } = await runCli(args);
    expect(code).toBe(2);
    expect(stderr).toContain(message);
  });
});
