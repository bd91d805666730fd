import { parseArgs } from "node:util";
import type { CommandDefinition, FlagDefinitions } from "./command-definition.js";
import { UsageError } from "./output.js";

/**
 * A command's arguments read by `node:util` parseArgs with the flags of its definition. A flag
 * the command does not have is a usage error naming it and the nearest flags it does have
 * (`--prot` → `--port`); every other outcome is parseArgs' own. (Async only for that error's
 * code, which loads when there is one: `serve` and `workspace` start without it.)
 */
export async function parseCommandArgs<const F extends FlagDefinitions, const P extends boolean = false>(
  definition: Pick<CommandDefinition<F>, "name" | "flags">,
  args: string[],
  options: { allowPositionals?: P } = {},
): Promise<ReturnType<typeof parseArgs<{ args: string[]; options: F; allowPositionals: P }>>> {
  try {
    return parseArgs({
      args,
      options: definition.flags,
      allowPositionals: (options.allowPositionals ?? false) as P,
    });
  } catch (error) {
    throw (await unknownFlagError(definition, error)) ?? error;
  }
}

/** parseArgs' refusal of an unknown flag, with the nearest known ones; undefined for any other error. */
async function unknownFlagError(
  definition: Pick<CommandDefinition, "name" | "flags">,
  error: unknown,
): Promise<UsageError | undefined> {
  if ((error as { code?: unknown }).code !== "ERR_PARSE_ARGS_UNKNOWN_OPTION") return undefined;
  const message = (error as Error).message;
  const hint = `run "mcplex ${definition.name} --help" for usage`;
  // A short flag (`-x`) is one letter from most others: only long ones are matched.
  const given = /^Unknown option '(--[^'=]+)/.exec(message)?.[1];
  const { nearestNames } = await import("./nearest-names.js");
  const near =
    given === undefined
      ? []
      : nearestNames(
          given,
          Object.keys(definition.flags).map((name) => `--${name}`),
        );
  if (near.length === 0) return new UsageError(`${definition.name}: ${message}`, { cause: error, hint });
  return new UsageError(
    `${definition.name}: Unknown option '${given!}'; did you mean ${near.join(" or ")}?`,
    { cause: error, hint },
  );
}
