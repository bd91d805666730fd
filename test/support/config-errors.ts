import { expect } from "vitest";
import { type ParseConfigOptions, parseConfig } from "../../src/config/parse-config.js";
import { ConfigError } from "../../src/errors.js";

/**
 * The `ConfigError` a config text is refused with (read as `mcplex.yaml` with an empty
 * environment unless `options` say otherwise); fails the test when it is accepted.
 */
export function errorOf(text: string, options: Partial<ParseConfigOptions> = {}): ConfigError {
  try {
    parseConfig(text, { source: "mcplex.yaml", env: {}, ...options });
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return error as ConfigError;
  }
  throw new Error("expected a ConfigError");
}

/** The issues (path and message each) a config text is refused with; see {@link errorOf}. */
export function issuesOf(
  text: string,
  options: Partial<ParseConfigOptions> = {},
): Array<{ path: string; message: string }> {
  return errorOf(text, options).issues;
}
