/**
 * What a command of the CLI is, as data: its usage line, its flags and its examples. The parser
 * (parse-command-args.ts), `mcplex <command> --help` (command-help.ts) and docs/reference/cli.md
 * (cli-reference.ts) are all made from it, so that they cannot disagree.
 */

/** One flag, in the shape `node:util` parseArgs takes, with what help shows of it. */
export interface FlagDefinition {
  readonly type: "string" | "boolean";
  readonly short?: string;
  /** Given more than once, it collects every value. */
  readonly multiple?: boolean;
  /** The value's placeholder in help: `--port P`. String flags only. */
  readonly value?: string;
  /** One line: what the flag does. */
  readonly description: string;
  /**
   * What holds when the flag is not given, for help only: the parser applies no default (the
   * command decides, and tells an unset flag from a given one).
   */
  readonly defaultText?: string;
}

/** A command's flags by their long name (without `--`). */
export type FlagDefinitions = Readonly<Record<string, FlagDefinition>>;

/** One example: the command line and what it does. */
export interface CommandExample {
  readonly command: string;
  readonly about: string;
}

/** A command, or a subcommand of a group such as `mcplex config`. */
export interface CommandDefinition<F extends FlagDefinitions = FlagDefinitions> {
  /** The words after `mcplex` that run it: `serve`, `config check`. */
  readonly name: string;
  /** Other names of a subcommand: `rm` is also `remove`. */
  readonly aliases?: readonly string[];
  /** One line: what it does. */
  readonly summary: string;
  /** The usage line: `mcplex serve [--http | --ws | --stdio] [--port P] ...`. */
  readonly usage: string;
  /** More about it than the summary says, a few sentences at most. */
  readonly details?: string;
  readonly flags: F;
  readonly examples: readonly CommandExample[];
  /** A group's subcommands (`config check`, `config convert`), each with its own help. */
  readonly subcommands?: readonly CommandDefinition[];
}

/** Keeps the flags' literal types, so that the parser's values are typed by them. */
export function defineCommand<const F extends FlagDefinitions>(
  definition: CommandDefinition<F>,
): CommandDefinition<F> {
  return definition;
}

/** The subcommand of `group` that `word` names (or one of its aliases). */
export function subcommandOf(
  group: CommandDefinition,
  word: string | undefined,
): CommandDefinition | undefined {
  if (word === undefined) return undefined;
  return group.subcommands?.find((sub) => lastWord(sub.name) === word || (sub.aliases ?? []).includes(word));
}

function lastWord(name: string): string {
  return name.slice(name.lastIndexOf(" ") + 1);
}
