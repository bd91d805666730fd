import { describe, expect, it } from "vitest";
import { resolveLlmConfig } from "../../src/agent/llm-config.js";
import { ConfigError } from "../../src/errors.js";

describe("resolveLlmConfig", () => {
  const config = {
    baseUrl: "http://config/v1",
    model: "config-model",
    apiKey: "config-key",
    provider: "gemini",
  };

  it("reads the config's llm section", () => {
    expect(resolveLlmConfig({ config })).toEqual(config);
  });

  it("lets the environment override the config, and flags override both", () => {
    const env = {
      MCPLEX_LLM_BASE_URL: "http://env/v1/",
      MCPLEX_LLM_MODEL: "env-model",
      MCPLEX_LLM_API_KEY: "env-key",
    };
    expect(resolveLlmConfig({ config, env })).toEqual({
      baseUrl: "http://env/v1",
      model: "env-model",
      apiKey: "env-key",
      provider: "gemini",
    });
    expect(
      resolveLlmConfig({ config, env, flags: { baseUrl: "http://flag/v1", model: "flag-model" } }),
    ).toMatchObject({
      baseUrl: "http://flag/v1",
      model: "flag-model",
      apiKey: "env-key",
    });
  });

  it("ignores empty values", () => {
    expect(resolveLlmConfig({ config, env: { MCPLEX_LLM_MODEL: "  " }, flags: { model: "" } }).model).toBe(
      "config-model",
    );
  });

  it("names the missing base URL and model with a hint", () => {
    expect(() => resolveLlmConfig({})).toThrow(ConfigError);
    try {
      resolveLlmConfig({ env: { MCPLEX_LLM_BASE_URL: "http://x/v1" } });
    } catch (error) {
      expect(error).toMatchObject({ code: "CONFIG_INVALID", path: "llm.model" });
      expect((error as ConfigError).hint).toMatch(/--model/);
    }
  });

  it("rejects a base URL that is not http(s)", () => {
    expect(() => resolveLlmConfig({ flags: { baseUrl: "not a url", model: "m" } })).toThrow(/not a URL/);
    expect(() => resolveLlmConfig({ flags: { baseUrl: "ftp://x", model: "m" } })).toThrow(/http/);
  });
});
