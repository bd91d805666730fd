import { bindSourceProblem, refused } from "./entry-rules.js";
import { configLiteral, hasControlCharacters, joinConfigText } from "./registry-text.js";
import type { RegistryArgument, RegistryInput } from "./server-json.js";

/**
 * The values of an entry as `server.json` declares them (fixed, templates with `{variables}`,
 * or inputs the user supplies) and the config text they become: the registry's own text written
 * literally, the user's as typed.
 */

/** A value `mcplex add` needs from the user before it can write the entry. */
export interface EntryInput {
  /**
   * What the value is: an environment variable, a remote's header, a URL variable, an argument,
   * or a `{variable}` inside an environment variable's or a header's fixed value.
   */
  kind: "env" | "header" | "url-variable" | "argument" | "variable";
  /** Its name: the variable's, the header's, the URL variable's, or an argument's value hint. */
  name: string;
  description?: string;
  required: boolean;
  /** Kept in the secret store and written as `${secret:...}`, never in the config. */
  secret: boolean;
  default?: string;
  choices?: string[];
}

/**
 * What an input is given: a string is the user's own text, in config syntax (its `${...}`
 * expand, as in any entry the user writes); `{ literal }` is text written so that it loads
 * back as itself, for a registry's default.
 */
export type InputText = string | { literal: string };

/** Argument text as a refusal shows it. */
export function argText(arg: RegistryArgument): string {
  return [arg.name, arg.value ?? arg.default ?? arg.valueHint].filter((part) => part !== undefined).join(" ");
}

/**
 * A check of registry text: a value is refused when `problem` names one, or when it holds
 * control characters (a line break in a name, an escape sequence in a value).
 */
export function checker(server: string) {
  return <T extends string>(path: string, value: T, problem: (value: T) => string | undefined): T => {
    if (typeof value !== "string")
      throw refused(server, path, JSON.stringify(value) ?? "", "it is not a string");
    if (hasControlCharacters(value)) throw refused(server, path, value, "it holds control characters");
    const why = problem(value);
    if (why !== undefined) throw refused(server, path, value, why);
    return value;
  };
}

/** A value of the entry and the inputs it is made of. */
export interface EntryValue {
  inputs: EntryInput[];
  /** The text, in config syntax, or `undefined` when an input it needs has none. */
  text(textOf: (input: EntryInput) => InputText | undefined): string | undefined;
}

/** An input's text in config syntax: a literal one escaped, the user's as typed. */
function configText(text: InputText): string {
  return typeof text === "string" ? text : configLiteral(text.literal);
}

/**
 * A value as `server.json` gives it: fixed (`value`), a template whose `{name}` placeholders
 * are its `variables` (each an input; a secret one becomes a `${secret:...}` inside the text),
 * or, without `value`, an input itself. The template's own text is written literally; a
 * template that holds control characters is refused, and so is one whose `$` would meet the
 * `{` of a value put after it (that would make a reference of the two).
 */
export function entryValue(
  server: string,
  path: string,
  kind: EntryInput["kind"],
  name: string,
  from: RegistryInput,
  valueField: "value" | "default" = "value",
): EntryValue {
  if (from.value === undefined) {
    const input = toInput(kind, name, from);
    return {
      inputs: [input],
      text(textOf) {
        const text = textOf(input);
        return text === undefined ? undefined : checkedText(server, path, configText(text));
      },
    };
  }
  const template = from.value;
  const valuePath = `${path}.${valueField}`;
  if (typeof template !== "string")
    throw refused(server, valuePath, JSON.stringify(template) ?? "", "it is not a string");
  if (hasControlCharacters(template))
    throw refused(server, valuePath, template, "it holds control characters");
  const inputs = Object.entries(from.variables ?? {})
    .filter(([variable]) => template.includes(`{${variable}}`))
    .map(([variable, def]) =>
      toInput(kind === "header" || kind === "env" ? "variable" : kind, variable, def),
    );
  const byName = new Map(inputs.map((input) => [input.name, input]));
  // `{name}` of a declared variable, else fixed text; one pass, so a value is never scanned again.
  const parts = template.split(/(\{[^{}]*\})/).filter((part) => part !== "");
  return {
    inputs,
    text(textOf) {
      const pieces: string[] = [];
      // Fixed text is escaped as one run: `${` may span a `{...}` that is no variable.
      let fixed = "";
      for (const part of parts) {
        const input = part.startsWith("{") ? byName.get(part.slice(1, -1)) : undefined;
        if (input === undefined) {
          fixed += part;
          continue;
        }
        const text = textOf(input);
        if (text === undefined) return undefined;
        pieces.push(configLiteral(fixed), configText(text));
        fixed = "";
      }
      pieces.push(configLiteral(fixed));
      const joined = joinConfigText(pieces);
      if (joined === undefined)
        throw refused(
          server,
          valuePath,
          template,
          `a "$" in it would meet the "{" of a value and make a "\${" reference`,
        );
      return checkedText(server, valuePath, joined);
    },
  };
}

/** The text of a value, refused when it holds control characters (a header split, a line forged). */
function checkedText(server: string, path: string, text: string): string {
  if (hasControlCharacters(text)) throw refused(server, path, text, "it holds control characters");
  return text;
}

/**
 * Arguments as argv parts; a required one without a value becomes an input. A flag or a value
 * `problem` names is refused (`--registry=...`), checked once the value is known; with
 * `namedOnly`, a positional argument is refused too (before an image, it would be taken for it).
 */
export function argumentParts(
  server: string,
  path: string,
  list: RegistryArgument[],
  problem: (arg: string) => string | undefined,
  namedOnly = false,
): {
  inputs: EntryInput[];
  build: (textOf: (input: EntryInput) => InputText | undefined) => string[];
} {
  const check = checker(server);
  const parts: Array<{ flag?: string; value?: EntryValue; path: string }> = [];
  for (const [index, arg] of list.entries()) {
    const at = `${path}[${index}]`;
    const named = arg.type === "named";
    if (named && !arg.name) continue;
    if (!named && namedOnly)
      throw refused(server, at, argText(arg), "a positional argument before the image would be taken for it");
    if (named) check(`${at}.name`, arg.name!, problem);
    if (named && namedOnly) {
      const why = bindSourceProblem(arg);
      if (why !== undefined) throw refused(server, at, argText(arg), why);
    }
    const fixed = arg.value ?? arg.default;
    const value =
      fixed !== undefined
        ? entryValue(
            server,
            at,
            "argument",
            arg.name ?? `arg${index + 1}`,
            { ...arg, value: fixed },
            arg.value === undefined ? "default" : "value",
          )
        : arg.isRequired
          ? entryValue(server, at, "argument", named ? arg.name! : (arg.valueHint ?? `arg${index + 1}`), {
              ...arg,
              isRequired: true,
            })
          : undefined;
    // A named flag without a value is a switch (`--verbose`); an optional one left out is omitted.
    if (named && (value !== undefined || (arg.isRequired !== true && arg.valueHint === undefined)))
      parts.push({ flag: arg.name!, path: at, ...(value === undefined ? {} : { value }) });
    else if (!named && value !== undefined) parts.push({ value, path: at });
  }
  return {
    inputs: parts.flatMap((part) => part.value?.inputs ?? []),
    build: (textOf) =>
      parts.flatMap((part) => {
        const text = part.value?.text(textOf);
        if (part.value !== undefined && text === undefined) return [];
        if (text !== undefined) check(`${part.path}.value`, text, problem);
        return [
          ...(part.flag === undefined ? [] : [configLiteral(part.flag)]),
          ...(text === undefined ? [] : [text]),
        ];
      }),
  };
}

/** One input per name: a variable two values use is asked for once. */
export function unique(inputs: EntryInput[]): EntryInput[] {
  const seen = new Map<string, EntryInput>();
  for (const input of inputs) if (!seen.has(input.name)) seen.set(input.name, input);
  return [...seen.values()];
}

function toInput(kind: EntryInput["kind"], name: string, from: RegistryInput): EntryInput {
  return {
    kind,
    name,
    // The document comes from the network: a field of another type than the schema's is left out.
    ...(typeof from.description === "string" ? { description: from.description } : {}),
    required: from.isRequired === true,
    secret: from.isSecret === true,
    ...(typeof from.default === "string" ? { default: from.default } : {}),
    ...(Array.isArray(from.choices) ? { choices: from.choices.filter((c) => typeof c === "string") } : {}),
  };
}
