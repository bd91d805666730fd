/**
 * Where the agent's LLM settings come from: flags over environment over the config file.
 */

import type { LlmConfig } from "../config/types.js";
import { ConfigError } from "../errors.js";

/** A complete LLM endpoint description, ready for {@link ChatClient} and `runAgent`. */
export interface ResolvedLlmConfig {
  baseUrl: string;
  model: string;
  apiKey?: string;
  /** Provider family (`gemini`, `openai`, `strict`, ...), used to pick schema handling. */
  provider?: string;
}

/** Command-line flags that bear on the LLM. */
export interface LlmFlags {
  baseUrl?: string;
  model?: string;
  apiKey?: string;
  provider?: string;
}

/**
 * Resolves the LLM settings: `--base-url`/`--model` flags first, then `MCPLEX_LLM_BASE_URL`,
 * `MCPLEX_LLM_MODEL`, `MCPLEX_LLM_API_KEY` (and `MCPLEX_LLM_PROVIDER`), then the config's `llm:`.
 * Throws a {@link ConfigError} naming what is missing.
 *
 * @example
 * const llm = resolveLlmConfig({ config: config.llm, flags: { model: "llama3.2" }, env: process.env });
 */
export function resolveLlmConfig(options: {
  config?: LlmConfig | undefined;
  flags?: LlmFlags | undefined;
  env?: Record<string, string | undefined> | undefined;
}): ResolvedLlmConfig {
  const { config = {}, flags = {}, env = {} } = options;
  const pick = (...values: Array<string | undefined>) =>
    values.find((v) => v !== undefined && v.trim() !== "")?.trim();
  const baseUrl = pick(flags.baseUrl, env.MCPLEX_LLM_BASE_URL, config.baseUrl);
  const model = pick(flags.model, env.MCPLEX_LLM_MODEL, config.model);
  const apiKey = pick(flags.apiKey, env.MCPLEX_LLM_API_KEY, config.apiKey);
  const provider = pick(flags.provider, env.MCPLEX_LLM_PROVIDER, config.provider);
  if (baseUrl === undefined) {
    throw new ConfigError("no LLM endpoint is configured", {
      path: "llm.baseUrl",
      hint: "Pass --base-url, set MCPLEX_LLM_BASE_URL, or add llm.baseUrl to the config (e.g. http://localhost:11434/v1).",
    });
  }
  let url: URL;
  try {
    url = new URL(baseUrl);
  } catch (error) {
    throw new ConfigError(
      `the LLM base URL is not a URL: ${baseUrl}`,
      { path: "llm.baseUrl" },
      { cause: error },
    );
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw new ConfigError(`the LLM base URL must be http(s): ${baseUrl}`, { path: "llm.baseUrl" });
  }
  if (model === undefined) {
    throw new ConfigError("no LLM model is configured", {
      path: "llm.model",
      hint: "Pass --model, set MCPLEX_LLM_MODEL, or add llm.model to the config.",
    });
  }
  const resolved: ResolvedLlmConfig = { baseUrl: baseUrl.replace(/\/+$/, ""), model };
  if (apiKey !== undefined) resolved.apiKey = apiKey;
  if (provider !== undefined) resolved.provider = provider;
  return resolved;
}
