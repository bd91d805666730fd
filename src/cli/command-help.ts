import type { CommandDefinition, FlagDefinition } from "./command-definition.js";

/** What the overview says after the commands: how a config is found, the exit codes. */
export const OVERVIEW_FOOTER = `Config: --config FILE, else mcplex.yaml|yml|json in this directory, else a read-only
workspace server on this directory. Claude Desktop / Cursor "mcpServers" and VS Code
"servers" files, and applications' "mcp: client: servers:" lists, "mcp_servers:" maps and
bare maps of servers by id are read as they are.

Exit codes: 0 ok, 1 the tool returned an error (or the server answered the call with a JSON-RPC
error; for replay verify, an answer changed), 2 usage, config, secret store or port error, 3 server (or LLM) unavailable.
Errors print one line and a hint; MCPLEX_DEBUG=1 or --debug adds the stack trace.`;

/** `mcplex --help`: every command's usage line and what it does, one command a paragraph. */
export function overviewHelp(definitions: readonly CommandDefinition[]): string {
  const commands = definitions.map((d) => `  ${d.usage}\n      ${d.summary}`);
  return [
    "mcplex — one runtime for every MCP server an agent uses",
    "",
    "Usage:",
    ...commands,
    "",
    'Run "mcplex <command> --help" (or "mcplex help <command>") for a command\'s flags and examples.',
    "",
    OVERVIEW_FOOTER,
  ].join("\n");
}

/** `mcplex <command> --help`: its usage, what it does, its subcommands, its flags, examples. */
export function commandHelp(definition: CommandDefinition): string {
  const lines = [`Usage: ${definition.usage}`, "", `${capitalised(definition.summary)}.`];
  if (definition.details !== undefined) lines.push(definition.details);
  const subcommands = definition.subcommands ?? [];
  if (subcommands.length > 0) {
    lines.push("", "Commands:");
    const width = Math.max(...subcommands.map((s) => s.name.length));
    for (const sub of subcommands) lines.push(`  mcplex ${sub.name.padEnd(width)}  ${sub.summary}`);
    lines.push("", `Run "mcplex ${subcommands[0]!.name} --help" and the like for a command's flags.`);
  }
  const flags = Object.entries(definition.flags);
  if (flags.length > 0) {
    lines.push("", "Flags:");
    const width = Math.max(...flags.map(([name, flag]) => flagTerm(name, flag).length));
    for (const [name, flag] of flags)
      lines.push(`  ${flagTerm(name, flag).padEnd(width)}  ${flagDescription(flag)}`);
  }
  lines.push("", "Examples:");
  for (const example of definition.examples) lines.push(`  ${example.command}`, `      ${example.about}`);
  return lines.join("\n");
}

/** `-c, --config F`, `--token T ...`. */
export function flagTerm(name: string, flag: FlagDefinition): string {
  const long = `--${name}${flag.value === undefined ? "" : ` ${flag.value}`}${flag.multiple ? " ..." : ""}`;
  return flag.short === undefined ? `    ${long}` : `-${flag.short}, ${long}`;
}

/** The flag's description, and its default when it has one. */
export function flagDescription(flag: FlagDefinition): string {
  return flag.defaultText === undefined
    ? flag.description
    : `${flag.description} (default: ${flag.defaultText})`;
}

function capitalised(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}
