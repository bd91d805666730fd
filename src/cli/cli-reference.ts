import type { CommandDefinition, FlagDefinition } from "./command-definition.js";
import { OVERVIEW_FOOTER } from "./command-help.js";

/** Where the reference is written, from the repository's root (`npm run docs:cli`). */
export const CLI_REFERENCE_PATH = "docs/reference/cli.md";

/**
 * docs/reference/cli.md: every command and subcommand with its usage, every flag (with its
 * default) and its examples, from the same definitions the parser and `--help` read.
 */
export function cliReference(definitions: readonly CommandDefinition[]): string {
  const lines = [
    "# Command-line reference",
    "",
    "<!-- Generated from src/cli/definitions/ by `npm run docs:cli`: edit those, not this file",
    "     (test/cli/cli-reference.test.ts fails when the two differ). -->",
    "",
    "Every command of `mcplex`, with its flags and examples. `mcplex <command> --help` prints the",
    "same for one command.",
    "",
  ];
  for (const definition of definitions) {
    lines.push(`- [\`mcplex ${definition.name}\`](#${anchor(definition)}): ${definition.summary}`);
  }
  lines.push("", "## Config and exit codes", "", ...OVERVIEW_FOOTER.split("\n"), "");
  for (const definition of definitions) {
    lines.push(...commandSection(definition, "##"));
    for (const sub of definition.subcommands ?? []) lines.push(...commandSection(sub, "###"));
  }
  return `${lines.join("\n").trimEnd()}\n`;
}

function commandSection(definition: CommandDefinition, level: string): string[] {
  const lines = [`${level} mcplex ${definition.name}`, "", `${capitalised(definition.summary)}.`];
  if (definition.details !== undefined) lines.push("", definition.details);
  lines.push("", "```", definition.usage, "```", "");
  const subcommands = definition.subcommands ?? [];
  if (subcommands.length > 0) {
    lines.push("Subcommands:", "");
    for (const sub of subcommands) lines.push(`- [\`mcplex ${sub.name}\`](#${anchor(sub)}): ${sub.summary}`);
    lines.push("");
  }
  const flags = Object.entries(definition.flags);
  if (flags.length > 0) {
    lines.push("| Flag | What it does | Default |", "| --- | --- | --- |");
    for (const [name, flag] of flags) lines.push(flagRow(name, flag));
    lines.push("");
  }
  lines.push("Examples:", "", "```sh");
  for (const example of definition.examples) lines.push(`# ${example.about}`, example.command);
  lines.push("```", "");
  return lines;
}

function flagRow(name: string, flag: FlagDefinition): string {
  const value = flag.value === undefined ? "" : ` ${flag.value}`;
  const terms = [`\`--${name}${value}\``];
  if (flag.short !== undefined) terms.unshift(`\`-${flag.short}\``);
  const repeatable = flag.multiple === true ? " Repeatable." : "";
  return `| ${cell(terms.join(", "))} | ${cell(capitalised(flag.description))}.${repeatable} | ${cell(flag.defaultText ?? "")} |`;
}

/** A table cell's text: a `|` would end the cell. */
function cell(text: string): string {
  return text.replaceAll("|", "\\|");
}

/** GitHub's anchor for a command's heading. */
function anchor(definition: CommandDefinition): string {
  return `mcplex-${definition.name.replaceAll(" ", "-")}`;
}

function capitalised(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}
