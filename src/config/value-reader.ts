import { ConfigError } from "../errors.js";
import { describeValue, type IssueCollector, joinPath, suggestKey } from "./config-issues.js";
import { type ExpandContext, expandVariables, hasReferences } from "./expand-variables.js";
import { parseByteSize } from "./parse-byte-size.js";
import { parseDuration } from "./parse-duration.js";
import { credentialParts, isSecretName } from "./redact.js";
import { hasUserPlaceholder } from "./user-placeholders.js";

/** A parsed YAML/JSON map. */
export type RawMap = Record<string, unknown>;

/**
 * Keeps `${...}` references as they are written (for `mcplex config convert`): each string that
 * holds one is checked, then read as a stand-in that {@link restoreReferences} turns back into
 * the text written. Checks that need the value (a URL's scheme, a boolean) see it expanded with
 * the environment given, unset variables as "".
 */
export class ReferenceKeeper {
  readonly #written = new Map<string, { raw: string; value: string }>();
  readonly #standIns = new Map<string, string>();

  /** The stand-in of `raw`, whose expansion is `value`. */
  keep(raw: string, value: string): string {
    const known = this.#standIns.get(raw);
    if (known !== undefined) return known;
    // A private-use character does not occur in config files, so a stand-in cannot meet a real value.
    const standIn = `\uE000ref${this.#written.size}\uE000`;
    this.#written.set(standIn, { raw, value });
    this.#standIns.set(raw, standIn);
    return standIn;
  }

  /** `text` with every stand-in replaced by its expansion. */
  probe(text: string): string {
    return text.includes("\uE000") ? text.replace(STAND_IN, (s) => this.#written.get(s)?.value ?? s) : text;
  }

  /** `text` with every stand-in replaced by the reference written. */
  restore(text: string): string {
    return text.includes("\uE000") ? text.replace(STAND_IN, (s) => this.#written.get(s)?.raw ?? s) : text;
  }
}

const STAND_IN = /\uE000ref\d+\uE000/g;

/** A copy of `value` (any JSON-like data) with every stand-in of `keeper` back to its reference. */
export function restoreReferences<T>(value: T, keeper: ReferenceKeeper): T {
  if (typeof value === "string") return keeper.restore(value) as T;
  if (Array.isArray(value)) return value.map((item) => restoreReferences(item, keeper)) as T;
  if (value !== null && typeof value === "object") {
    return Object.fromEntries(
      Object.entries(value).map(([key, item]) => [key, restoreReferences(item, keeper)]),
    ) as T;
  }
  return value;
}

/**
 * Reads typed values out of a parsed document, expanding `${...}` in every string it
 * reads, recording problems (with their exact path) instead of stopping at the first, and
 * remembering every credential it sees for redaction.
 */
export class ValueReader {
  /** Values to redact: resolved secrets and values of credential-named fields. */
  readonly secrets = new Set<string>();
  private readonly context: ExpandContext;

  constructor(
    readonly issues: IssueCollector,
    /** The environment and secrets as given, before references are kept. */
    private readonly given: ExpandContext,
    /** Keep `${...}` references instead of expanding them (see {@link ReferenceKeeper}). */
    readonly keeper?: ReferenceKeeper,
  ) {
    this.context =
      keeper === undefined
        ? { ...given, onSecret: (value) => this.secrets.add(value) }
        : {
            env: new Proxy(given.env, { get: (env, name) => Reflect.get(env, name) ?? "" }),
            secret: () => "",
          };
  }

  /**
   * A reader that checks what this one checks, into the same issues, but needs no value: an
   * unset `${VAR}` reads as "" and no secret is resolved. For a part of a file read only to be
   * checked (a disabled block), whose values nothing uses.
   */
  checkOnly(): ValueReader {
    return new ValueReader(this.issues, this.given, new ReferenceKeeper());
  }

  /** The value a string read by this reader stands for (itself, unless references are kept). */
  probe(text: string): string {
    return this.keeper === undefined ? text : this.keeper.probe(text);
  }

  /** Records a problem at `path`. */
  fail(path: string, message: string): undefined {
    this.issues.add(path, message);
    return undefined;
  }

  /** Marks a value as a credential (whole value, plus the token of `Bearer xyz`). */
  markSecret(value: string): void {
    for (const part of credentialParts(value)) this.secrets.add(part);
  }

  /** A map, or `undefined` (with an issue unless absent). */
  map(value: unknown, path: string): RawMap | undefined {
    if (value === undefined) return undefined;
    if (value === null || typeof value !== "object" || Array.isArray(value)) {
      return this.fail(path, `must be a map of keys to values, not ${describeValue(value)}`);
    }
    return value as RawMap;
  }

  /** Records every key of `node` that is not in `valid`, with a did-you-mean and the valid keys. */
  knownKeys(node: RawMap, path: string, valid: readonly string[]): void {
    for (const key of Object.keys(node)) {
      if (valid.includes(key)) continue;
      const guess = suggestKey(key, valid);
      const hint = guess === undefined ? "" : `did you mean "${guess}"? `;
      this.fail(joinPath(path, key), `unknown key "${key}"; ${hint}valid keys: ${valid.join(", ")}`);
    }
  }

  /**
   * A string with `${...}` expanded. Numbers and booleans are accepted as their text when
   * `coerce` is set (YAML reads `PORT: 8080` as a number).
   */
  string(value: unknown, path: string, coerce = false): string | undefined {
    if (value === undefined) return undefined;
    if (coerce && (typeof value === "number" || typeof value === "boolean")) return String(value);
    if (typeof value !== "string") {
      const fix = value === null ? 'give a value or remove the key (use "" for an empty string)' : "quote it";
      return this.fail(path, `must be a string, not ${describeValue(value)}; ${fix}`);
    }
    try {
      const expanded = expandVariables(value, this.context, path);
      return this.keeper !== undefined && hasReferences(value) ? this.keeper.keep(value, expanded) : expanded;
    } catch (error) {
      if (!(error instanceof ConfigError)) throw error;
      this.issues.issues.push(...error.issues);
      return undefined;
    }
  }

  /** A non-empty string. */
  nonEmpty(value: unknown, path: string): string | undefined {
    const text = this.string(value, path);
    if (text === undefined || text.trim() !== "") return text;
    return this.fail(path, "must not be empty");
  }

  /** A list of strings (scalars coerced), each expanded. */
  stringList(value: unknown, path: string): string[] | undefined {
    if (value === undefined) return undefined;
    if (!Array.isArray(value))
      return this.fail(path, `must be a list of strings, not ${describeValue(value)}`);
    const out: string[] = [];
    value.forEach((item, i) => {
      const text = this.string(item, joinPath(path, i), true);
      if (text !== undefined) out.push(text);
    });
    return out;
  }

  /**
   * A map of strings (env, headers), each value expanded. Values under credential-looking
   * keys (`GITHUB_TOKEN`, `Authorization`) are marked as secrets.
   */
  stringMap(value: unknown, path: string): Record<string, string> | undefined {
    const node = this.map(value, path);
    if (node === undefined) return undefined;
    const out: Record<string, string> = {};
    for (const [key, item] of Object.entries(node)) {
      const text = this.string(item, joinPath(path, key), true);
      if (text === undefined) continue;
      out[key] = text;
      // A `${user:NAME}` is not a value yet: each user's is filled, and redacted, per connection.
      if (isSecretName(key) && !hasUserPlaceholder(text)) this.markSecret(text);
    }
    return out;
  }

  /** A boolean; the strings "true"/"false" are accepted so that `${FLAG:-false}` works. */
  boolean(value: unknown, path: string): boolean | undefined {
    if (value === undefined || typeof value === "boolean") return value;
    const read = typeof value === "string" ? this.string(value, path) : undefined;
    const text = read === undefined ? undefined : this.probe(read);
    if (text === "true" || text === "false") return text === "true";
    if (typeof value === "string" && text === undefined) return undefined;
    return this.fail(path, `must be true or false, not ${describeValue(text ?? value)}`);
  }

  /** A whole number from `min` up; a string of digits is accepted so that `${N:-4}` works. */
  count(value: unknown, path: string, min = 1): number | undefined {
    if (value === undefined) return undefined;
    const read = typeof value === "string" ? this.string(value, path) : value;
    if (read === undefined) return undefined;
    const expanded = typeof read === "string" ? this.probe(read) : read;
    const n = typeof expanded === "string" && /^\d+$/.test(expanded) ? Number(expanded) : expanded;
    if (typeof n === "number" && Number.isSafeInteger(n) && n >= min) return n;
    return this.fail(path, `must be a whole number of at least ${min}, not ${describeValue(expanded)}`);
  }

  /** A size in bytes: a number, or a string such as "64MiB", "512KiB", "1GiB". */
  byteSize(value: unknown, path: string): number | undefined {
    if (value === undefined) return undefined;
    const read = typeof value === "string" ? this.string(value, path) : value;
    if (read === undefined) return undefined;
    const expanded = typeof read === "string" ? this.probe(read) : read;
    const bytes = parseByteSize(expanded);
    if (bytes !== undefined) return bytes;
    return this.fail(
      path,
      `${describeValue(expanded)} is not a size; use bytes (67108864) or a string like "64MiB", "512KiB", "1GiB"`,
    );
  }

  /** A duration in ms: a number, or a string such as "30s", "2m", "500ms". */
  duration(value: unknown, path: string): number | undefined {
    if (value === undefined) return undefined;
    const read = typeof value === "string" ? this.string(value, path) : value;
    if (read === undefined) return undefined;
    const expanded = typeof read === "string" ? this.probe(read) : read;
    const ms = parseDuration(expanded);
    if (ms !== undefined) return ms;
    return this.fail(
      path,
      `${describeValue(expanded)} is not a duration; use milliseconds (30000) or a string ` +
        `like "30s", "2m", "500ms" (more than 0, at most 24 days)`,
    );
  }

  /** One of `choices` (after expansion). */
  choice<T extends string>(value: unknown, path: string, choices: readonly T[]): T | undefined {
    const read = this.string(value, path);
    const text = read === undefined ? undefined : this.probe(read);
    if (text === undefined || (choices as readonly string[]).includes(text)) return text as T | undefined;
    return this.fail(path, `${describeValue(text)} is not valid; use one of: ${choices.join(", ")}`);
  }
}
