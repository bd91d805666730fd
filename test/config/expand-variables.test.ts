// biome-ignore-all lint/suspicious/noTemplateCurlyInString: config texts under test hold ${...} references
import { describe, expect, it } from "vitest";
import { expandVariables, parseConfig } from "../../src/config/index.js";
import { ConfigError } from "../../src/errors.js";

const env = { HOME_DIR: "/home/me", EMPTY: "", NAME: "world" };
const expand = (text: string) =>
  expandVariables(text, { env, secret: (n) => (n === "api" ? "s3cr3t-value" : undefined) });

function thrown(fn: () => unknown): ConfigError {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return error as ConfigError;
  }
  throw new Error("expected a ConfigError");
}

describe("variable expansion", () => {
  it("replaces ${VAR} and ${env:VAR}", () => {
    expect(expand("hello ${NAME}, home ${env:HOME_DIR}")).toBe("hello world, home /home/me");
  });

  it("uses the default of ${VAR:-default} when the variable is unset or empty", () => {
    expect(expand("${UNSET:-fallback}")).toBe("fallback");
    expect(expand("${EMPTY:-fallback}")).toBe("fallback");
    expect(expand("${NAME:-fallback}")).toBe("world");
    expect(expand("${UNSET:-}")).toBe("");
    expect(expand("${UNSET:-a:b}c")).toBe("a:bc");
  });

  it("expands references inside defaults", () => {
    expect(expand("${UNSET:-${NAME}}!")).toBe("world!");
    expect(expand("${UNSET:-${ALSO_UNSET:-deep}}")).toBe("deep");
  });

  it("keeps an empty variable without default as empty", () => {
    expect(expand("[${EMPTY}]")).toBe("[]");
  });

  it("treats $${ as a literal ${ and leaves $VAR alone", () => {
    expect(expand("$${NAME}")).toBe("${NAME}");
    expect(expand("cost $5 and $NAME and $$")).toBe("cost $5 and $NAME and $$");
    expect(expand("$${NAME} is ${NAME}")).toBe("${NAME} is world");
  });

  it("resolves ${secret:NAME} through the resolver", () => {
    expect(expand("Bearer ${secret:api}")).toBe("Bearer s3cr3t-value");
  });

  it("reports a missing variable with its exact path and the fix", () => {
    const error = thrown(() =>
      parseConfig("servers:\n  github:\n    command: gh\n    env:\n      GITHUB_TOKEN: ${GITHUB_TOKEN}\n", {
        source: "mcplex.yaml",
        env: {},
      }),
    );
    expect(error.code).toBe("CONFIG_VARIABLE_MISSING");
    expect(error.path).toBe("servers.github.env.GITHUB_TOKEN");
    expect(error.message).toContain("GITHUB_TOKEN is not set");
    expect(error.message).toContain("${GITHUB_TOKEN:-default}");
  });

  it("reports a missing variable inside args by index", () => {
    const error = thrown(() =>
      parseConfig('{"servers": {"a": {"command": "x", "args": ["ok", "${NOPE}"]}}}', {
        source: "c.json",
        env: {},
      }),
    );
    expect(error.path).toBe("servers.a.args[1]");
  });

  it("reports a missing secret with the `mcplex secrets set` fix", () => {
    const error = thrown(() =>
      parseConfig(
        "servers:\n  a:\n    url: https://x.example/mcp\n    headers:\n      Authorization: Bearer ${secret:gh}\n",
        {
          source: "mcplex.yaml",
          secretResolver: () => undefined,
        },
      ),
    );
    expect(error.code).toBe("SECRET_MISSING");
    expect(error.path).toBe("servers.a.headers.Authorization");
    expect(error.message).toContain("mcplex secrets set gh");
  });

  it("explains that VS Code ${input:...} prompts cannot be shown", () => {
    const error = thrown(() =>
      parseConfig(
        '{"inputs": [], "servers": {"a": {"type": "stdio", "command": "x", "env": {"K": "${input:key}"}}}}',
        {
          source: "mcp.json",
        },
      ),
    );
    expect(error.path).toBe("servers.a.env.K");
    expect(error.message).toMatch(/VS Code prompt.*mcplex secrets set key/);
  });

  it("rejects malformed references with the escape as a fix", () => {
    expect(thrown(() => expand("${NAME")).message).toMatch(/unterminated.*\$\$\{/);
    expect(thrown(() => expand("${1BAD}")).message).toMatch(/not a valid reference/);
    expect(thrown(() => expand("${A:B}")).message).toMatch(/not a valid reference/);
  });

  it("expands values only, never keys", () => {
    const config = parseConfig("servers:\n  a:\n    command: x\n    env:\n      ${KEY}: ${NAME}\n", {
      source: "mcplex.yaml",
      env,
    });
    expect(config.servers[0]).toMatchObject({ env: { "${KEY}": "world" } });
  });

  it("expands into typed fields before they are checked", () => {
    const config = parseConfig(
      "servers:\n  a:\n    command: x\n    timeout: ${T:-2m}\n    lazy: ${LAZY:-true}\n    enabled: ${ON:-false}\n",
      { source: "mcplex.yaml", env: {} },
    );
    expect(config.servers[0]).toMatchObject({ timeout: 120_000, lazy: true, enabled: false });
  });
});
