#!/usr/bin/env node
import module from "node:module";
import { type CommandDefinition, subcommandOf } from "./command-definition.js";
import { EXIT, printError, setDebug, UsageError } from "./output.js";

type Command = (args: string[]) => Promise<number>;

/** A command: its code, and its definition (flags, usage, examples) for `--help`. */
interface CommandEntry {
  run: () => Promise<Command>;
  definition: () => Promise<CommandDefinition>;
}

/**
 * Each command loads its own code, and only that: a client spawns `mcplex serve --stdio` for
 * every session, and start-up is felt each time (bench/startup-bench.ts). Its definition loads
 * only for `--help`.
 */
const COMMANDS: Record<string, CommandEntry> = {
  add: {
    run: async () => (await import("./commands/registry.js")).addCommand,
    definition: async () => (await import("./definitions/add.js")).addDefinition,
  },
  auth: {
    run: async () => (await import("./commands/auth.js")).authCommand,
    definition: async () => (await import("./definitions/auth.js")).authDefinition,
  },
  list: {
    run: async () => (await import("./commands/list.js")).listCommand,
    definition: async () => (await import("./definitions/list.js")).listDefinition,
  },
  replay: {
    run: async () => (await import("./commands/replay.js")).replayCommand,
    definition: async () => (await import("./definitions/replay.js")).replayDefinition,
  },
  call: {
    run: async () => (await import("./commands/call.js")).callCommand,
    definition: async () => (await import("./definitions/call.js")).callDefinition,
  },
  chat: {
    run: async () => (await import("./commands/chat.js")).chatCommand,
    definition: async () => (await import("./definitions/chat.js")).chatDefinition,
  },
  config: {
    run: async () => (await import("./commands/config.js")).configCommand,
    definition: async () => (await import("./definitions/config.js")).configDefinition,
  },
  connections: {
    run: async () => (await import("./commands/connections.js")).connectionsCommand,
    definition: async () => (await import("./definitions/connections.js")).connectionsDefinition,
  },
  doctor: {
    run: async () => (await import("./commands/doctor.js")).doctorCommand,
    definition: async () => (await import("./definitions/doctor.js")).doctorDefinition,
  },
  search: {
    run: async () => (await import("./commands/registry.js")).searchCommand,
    definition: async () => (await import("./definitions/search.js")).searchDefinition,
  },
  secrets: {
    run: async () => (await import("./commands/secrets.js")).secretsCommand,
    definition: async () => (await import("./definitions/secrets.js")).secretsDefinition,
  },
  serve: {
    run: async () => (await import("./commands/serve.js")).serveCommand,
    definition: async () => (await import("./definitions/serve.js")).serveDefinition,
  },
  trust: {
    run: async () => (await import("./commands/trust.js")).trustCommand,
    definition: async () => (await import("./definitions/trust.js")).trustDefinition,
  },
  workspace: {
    run: async () => (await import("./commands/workspace.js")).workspaceCommand,
    definition: async () => (await import("./definitions/workspace.js")).workspaceDefinition,
  },
};

async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  if (command === undefined) {
    await printOverview();
    return EXIT.usage;
  }
  // `mcplex help COMMAND` is `mcplex COMMAND --help`; `mcplex help` alone, the overview.
  const asked = command === "help" ? rest[0] : command;
  if (asked === undefined || asked === "--help" || asked === "-h") {
    await printOverview();
    return EXIT.ok;
  }
  if (command === "help") return printHelp(asked, rest.slice(1));
  if (command === "--version" || command === "-v") {
    console.log("0.1.0");
    return EXIT.ok;
  }
  const entry = await commandNamed(command);
  if (rest.includes("--help") || rest.includes("-h")) return printHelp(command, rest);
  try {
    return await (await entry.run())(rest);
  } catch (error) {
    const hint = `run "mcplex ${command} --help" for usage`;
    // node:util parseArgs: an unknown option, a missing value, a stray argument.
    const code = (error as { code?: unknown }).code;
    if (typeof code === "string" && code.startsWith("ERR_PARSE_ARGS_")) {
      throw new UsageError(`${command}: ${(error as Error).message}`, { hint });
    }
    if (error instanceof UsageError && error.hint === undefined) error.hint = hint;
    throw error;
  }
}

/** The command `name` names; an unknown one is a usage error naming the nearest commands. */
async function commandNamed(name: string): Promise<CommandEntry> {
  const entry = Object.hasOwn(COMMANDS, name) ? COMMANDS[name] : undefined;
  if (entry !== undefined) return entry;
  const { nearestNames } = await import("./nearest-names.js");
  const names = Object.keys(COMMANDS);
  const near = nearestNames(name, names);
  throw new UsageError(
    `unknown command "${name}"; ` +
      (near.length > 0 ? `did you mean ${near.join(" or ")}?` : `commands: ${names.join(", ")}`),
  );
}

/** `mcplex --help`: every command in a line or two. */
async function printOverview(): Promise<void> {
  const [{ overviewHelp }, { ALL_DEFINITIONS }] = await Promise.all([
    import("./command-help.js"),
    import("./definitions/all-definitions.js"),
  ]);
  console.log(overviewHelp(ALL_DEFINITIONS));
}

/** `mcplex COMMAND [SUBCOMMAND] --help`: the help of the subcommand named first in `rest`, else of the command. */
async function printHelp(command: string, rest: readonly string[]): Promise<number> {
  const entry = await commandNamed(command);
  const [{ commandHelp }, definition] = await Promise.all([import("./command-help.js"), entry.definition()]);
  console.log(commandHelp(subcommandOf(definition, rest[0]) ?? definition));
  return EXIT.ok;
}

/**
 * Node >= 22.1 keeps the code it compiled for each module on disk (NODE_COMPILE_CACHE, else
 * `node-compile-cache` in the OS temp dir; NODE_DISABLE_COMPILE_CACHE=1 turns it off), so the
 * next start compiles less. On from here, it serves what loads after it: every command's code.
 * Node 20 has no such cache: nothing happens there.
 */
function enableCompileCache(): void {
  // A cache it cannot write (a read-only temp dir) comes back as a status, not a throw: the
  // start then costs what it costs without one.
  const { enableCompileCache: enable } = module as { enableCompileCache?: () => unknown };
  enable?.();
}

enableCompileCache();
// --debug anywhere (before or after the command) is for maintainers: stack traces on errors.
const argv = process.argv.slice(2);
if (argv.includes("--debug")) setDebug(true);
main(argv.filter((arg) => arg !== "--debug")).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    process.exitCode = printError(error);
  },
);
