import { MAX_REDACT_DEPTH, redactValue, someString } from "../config/redact.js";
import type { GuardrailConfig } from "../config/types.js";
import type { JsonObject } from "../hub/call-pipeline.js";
import type { Checked, GuardrailCheck, GuardrailOutcome } from "./guardrail-layer.js";

// Credentials found by secretlint's recommended rules (AWS, GCP, GitHub, Slack, npm, private
// keys, basic-auth URLs, ...), a rule set its maintainers keep up with the providers' formats:
// not patterns written here. Loaded with the first `secrets` guardrail's first call.

type Lint = (text: string) => Promise<Array<{ rule: string; range: readonly [number, number] }>>;

let linting: Promise<Lint> | undefined;

function linter(): Promise<Lint> {
  linting ??= (async () => {
    const [{ lintSource }, { creator }] = await Promise.all([
      import("@secretlint/core"),
      import("@secretlint/secretlint-rule-preset-recommend"),
    ]);
    const config = { rules: [{ id: "@secretlint/secretlint-rule-preset-recommend", rule: creator }] };
    return async (text: string) => {
      const { messages } = await lintSource({
        source: { content: text, filePath: "/value.txt", ext: ".txt", contentType: "text" },
        options: { config, maskSecrets: false },
      });
      return messages.map((m) => ({
        rule: m.ruleId.replace(/^@secretlint\/secretlint-rule-/, ""),
        range: m.range,
      }));
    };
  })();
  return linting;
}

/** Strings shorter than this hold no credential of the rule set's (the shortest are 20 or so). */
const SHORTEST = 16;

/**
 * `secrets`: credentials in a call's arguments (before they reach the server) and in its
 * result (before the caller sees them), found by secretlint's recommended rules. `action:
 * block` refuses the call or withholds the result; `redact` (the default) replaces each with
 * `[secret redacted]`.
 */
export function secretsGuardrail(config: GuardrailConfig): GuardrailCheck {
  const clearText = (json: string): boolean => !LONG_STRING.test(json) && !deeperThan(json, MAX_REDACT_DEPTH);
  const check = (value: JsonObject, where: string): Checked => {
    // Not async: a value with no string long enough to hold a credential (most arguments)
    // passes at once, with no promise of this guardrail's own.
    const strings = new Set<string>();
    // True only past the walk's depth, where nothing is read: what is nested that deep is taken
    // out instead.
    const deep = someString(value, (text) => {
      if (text.length >= SHORTEST) strings.add(text);
      return false;
    });
    if (strings.size === 0 && !deep) return { action: "pass" };
    return linted(value, strings, deep, where);
  };
  const linted = async (
    value: JsonObject,
    strings: Set<string>,
    deep: boolean,
    where: string,
  ): Promise<GuardrailOutcome> => {
    const lint = await linter();
    const found = new Map<string, Array<{ rule: string; range: readonly [number, number] }>>();
    for (const text of strings) {
      const hits = await lint(text);
      if (hits.length > 0) found.set(text, hits);
    }
    if (found.size === 0 && !deep) return { action: "pass" };
    const rules = [...new Set([...found.values()].flat().map((hit) => hit.rule))].sort();
    const count = [...found.values()].reduce((n, hits) => n + hits.length, 0);
    const what =
      found.size === 0
        ? `parts nested past ${MAX_REDACT_DEPTH} levels in ${where}, which are not read`
        : `${count} credential${count === 1 ? "" : "s"} (${rules.join(", ")}) in ${where}`;
    if (config.action === "block")
      return { action: "refuse", message: `${what}; nothing with a credential in it passes` };
    const redacted = redactValue(value, (text) => {
      const hits = found.get(text);
      return hits === undefined
        ? text
        : redactRanges(
            text,
            hits.map((hit) => hit.range),
          );
    });
    return { action: "rewrite", value: redacted, detail: `${what} redacted` };
  };
  return {
    clearText,
    request: (args) => check(args, "the arguments"),
    response: (result) => check(result, "the result"),
  };
}

/** A string of JSON text long enough to hold a credential (in a text with no escape, as it is). */
const LONG_STRING = new RegExp(`"[^"]{${SHORTEST},}"`);

/**
 * Whether JSON text may nest deeper than `depth` (what the walk does not read, and takes out):
 * not unless it opens that many objects and arrays in all.
 */
function deeperThan(json: string, depth: number): boolean {
  let opened = 0;
  for (let i = 0; i < json.length; i++) {
    const c = json.charCodeAt(i);
    if ((c === 123 || c === 91) && ++opened > depth) return true;
  }
  return false;
}

/** `text` with each range replaced by `[secret redacted]` (ranges may overlap). */
function redactRanges(text: string, ranges: ReadonlyArray<readonly [number, number]>): string {
  const sorted = [...ranges].sort((a, b) => a[0] - b[0]);
  let out = "";
  let at = 0;
  for (const [start, end] of sorted) {
    if (end <= at) continue;
    out += `${text.slice(at, Math.max(at, start))}[secret redacted]`;
    at = end;
  }
  return out + text.slice(at);
}
