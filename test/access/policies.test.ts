import { resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { Policies, type PolicyCaller } from "../../src/access/policies.js";
import { runAgent } from "../../src/agent/run-agent.js";
import { buildHub } from "../../src/assembly/build-hub.js";
import { mcplexDocument } from "../../src/config/mcplex-document.js";
import { parseConfig } from "../../src/config/parse-config.js";
import {
  compilePolicyExpression,
  type PolicyExpression,
  type PolicyVariables,
  toolGuard,
} from "../../src/config/policy-expressions.js";
import type { PolicyRuleConfig } from "../../src/config/types.js";
import { ConfigError } from "../../src/errors.js";
import type { RequestTarget } from "../../src/hub/call-pipeline.js";
import { collect, collectText, startMockLlm, toolMessages } from "../support/mock-llm.js";

/** The config's problems, one per line, as `config check` prints them. */
function problems(policies: string): string[] {
  try {
    parseConfig(`servers: {}\npolicies:\n${policies}`, { source: "p.yaml", env: {} });
    return [];
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    return error.issues.map((issue) => `${issue.path}: ${issue.message}`);
  }
}

const rule = (r: Partial<PolicyRuleConfig> & Pick<PolicyRuleConfig, "name" | "when" | "effect">) =>
  ({ phase: "request", ...r }) as PolicyRuleConfig;

const TOOL: RequestTarget = { kind: "tool", name: "ws__write_file", server: "ws" };
const USER: PolicyCaller = { signedIn: true, scopes: ["mcp:tools"] };
const LOCAL: PolicyCaller = { signedIn: false, scopes: [] };

function variables(
  request: Record<string, unknown> = {},
  caller: Record<string, unknown> = {},
): PolicyVariables {
  return {
    caller: { groups: [], subject: "dev", ...caller },
    request: { method: "tools/call", tool: "ws__write_file", server: "ws", arguments: {}, ...request },
    response: {},
    now: new Date("2026-11-29T10:00:00Z"),
  };
}

describe("policies: in the config", () => {
  it("reads a rule with its defaults", () => {
    const config = parseConfig(
      `servers: {}\npolicies:\n  - name: no-writes\n    when: 'request.tool.endsWith("write_file")'\n    effect: deny\n`,
      { source: "p.yaml", env: {} },
    );
    expect(config.policies).toEqual([
      { name: "no-writes", when: 'request.tool.endsWith("write_file")', effect: "deny", phase: "request" },
    ]);
  });

  it("survives being written back as an mcplex file (config convert)", () => {
    const text = `servers: {}\npolicies:\n  - name: a\n    when: 'request.tool == "x"'\n    effect: require\n    scopes: [s]\n  - name: b\n    when: 'true'\n    effect: audit\n    phase: response\n`;
    const config = parseConfig(text, { source: "p.yaml", env: {} });
    const again = parseConfig(stringify(mcplexDocument(config)), { source: "q.yaml", env: {} });
    expect(again.policies).toEqual(config.policies);
    expect(config.policies?.map((p) => p.phase)).toEqual(["request", "response"]);
  });

  it("names the rule and the position of a condition that does not parse", () => {
    const [problem, ...rest] = problems(
      `  - name: broken\n    when: 'caller.groups.exists(g, g == "x") &&'\n    effect: deny\n`,
    );
    expect(rest).toEqual([]);
    expect(problem).toBe(
      "policies[0].when: of policies[0] (broken) is not a valid condition: Unexpected token: EOF, at line 1, column 37 of the condition",
    );
    const [multiline] = problems(
      `  - name: two-lines\n    when: |\n      true &&\n        caller.x +\n    effect: deny\n`,
    );
    expect(multiline).toMatch(/at line 3, column \d+ of the condition$/);
  });

  it("refuses a condition that is not a bool, and one that mixes types", () => {
    expect(problems(`  - name: text\n    when: '"yes"'\n    effect: deny\n`)).toEqual([
      "policies[0].when: of policies[0] (text) is not a valid condition: yields string, and a condition must yield a bool (true or false)",
    ]);
    const [mixed] = problems(`  - name: mixed\n    when: '"a" + 1 == "a1"'\n    effect: deny\n`);
    expect(mixed).toContain("no such overload: string + int");
  });

  it("names every other mistake with its fix", () => {
    expect(
      problems(
        [
          "  - name: a\n    when: 'true'\n    effect: block",
          "  - name: b\n    when: 'true'\n    effect: allow\n    phase: response",
          "  - name: c\n    when: 'true'\n    effect: require",
          "  - name: d\n    when: 'true'\n    effect: audit\n    message: hi",
          "  - name: d\n    when: 'true'\n    effect: deny",
          "  - when: 'true'\n    effect: deny",
          "  - name: f\n    when: true\n    effect: deny",
          "  - name: g\n    when: 'true'\n    effect: deny\n    scopes: [x]",
          "  - name: h\n    when: 'true'\n    effect: deny\n    unless: 'false'",
        ].join("\n"),
      ),
    ).toEqual([
      'policies[0].effect: must be one of allow, deny, require, audit, not "block"',
      "policies[1].effect: allow cannot apply to a result (the request went through); a response rule may deny or audit",
      "policies[2].scopes: must name the scopes a matching request needs, such as [admin]",
      "policies[3].message: is what a deny answers; this rule does not deny",
      'policies[4].name: "d" names another rule too; names are unique',
      "policies[5].name: is required: the audit trail and refusals name the rule",
      "policies[6].when: must be a CEL condition such as '\"admins\" in caller.groups', not true (quote it in YAML)",
      "policies[7].scopes: belongs to a require rule; this rule does not require scopes",
      'policies[8].unless: unknown key "unless"; valid keys: name, when, effect, phase, message, scopes',
    ]);
  });

  it("takes a condition as written: ${...} is not expanded into it", () => {
    const config = parseConfig(
      `servers: {}\npolicies:\n  - name: lit\n    when: 'request.tool == "\${TOOL}"'\n    effect: deny\n`,
      { source: "p.yaml", env: { TOOL: '" || true || "' } },
    );
    expect(config.policies?.[0]?.when).toBe('request.tool == "${TOOL}"');
    const verdict = new Policies(config.policies!).decideRequest(variables(), TOOL, USER);
    expect(verdict.outcome).toBe("allow");
  });
});

describe("Policies: the decision", () => {
  it("reads rules in order: audits recorded, the first allow or deny decides", () => {
    const policies = new Policies([
      rule({ name: "watch", when: "true", effect: "audit" }),
      rule({ name: "eng-writes", when: '"eng" in caller.groups', effect: "allow" }),
      rule({ name: "no-writes", when: 'request.tool.endsWith("write_file")', effect: "deny", message: "no" }),
    ]);
    const eng = policies.decideRequest(variables({}, { groups: ["eng"] }), TOOL, USER);
    expect(eng.outcome).toBe("allow");
    expect(eng.decisions.map((d) => `${d.rule}:${d.effect}`)).toEqual(["watch:audit", "eng-writes:allow"]);
    const other = policies.decideRequest(variables(), TOOL, USER);
    expect(other).toMatchObject({ outcome: "deny", denied: { rule: "no-writes", message: "no" } });
    expect(policies.decideRequest(variables({ tool: "ws__read_file" }), TOOL, USER).outcome).toBe("allow");
  });

  it("asks scopes of a signed-in caller only, from every require rule that holds", () => {
    const policies = new Policies(
      [
        rule({ name: "a", when: "true", effect: "require", scopes: ["editor", "mcp:tools"] }),
        rule({ name: "b", when: "true", effect: "require", scopes: ["admin", "editor"] }),
      ],
      [{ tools: ["ws__*"], scopes: ["files"] }],
    );
    const verdict = policies.decideRequest(variables(), TOOL, USER);
    expect(verdict.outcome).toBe("require");
    expect(verdict.missing).toEqual(["editor", "admin", "files"]);
    expect(verdict.decisions.map((d) => d.rule)).toEqual(["a", "b", "auth.require"]);
    expect(
      policies.decideRequest(variables(), TOOL, {
        signedIn: true,
        scopes: ["mcp:tools", "editor", "admin", "files"],
      }),
    ).toMatchObject({ outcome: "allow", missing: [] });
    // Not signed in: their access is their profile.
    expect(policies.decideRequest(variables(), TOOL, LOCAL).outcome).toBe("allow");
  });

  it("fails closed on a condition it cannot evaluate: a deny holds, an allow does not", () => {
    const deny = new Policies([
      rule({ name: "etc", when: 'request.arguments.path.startsWith("/etc")', effect: "deny" }),
    ]);
    const verdict = deny.decideRequest(variables(), TOOL, USER);
    expect(verdict.outcome).toBe("deny");
    expect(verdict.denied?.message).toBe(
      'denied by policy "etc": its condition could not be evaluated for this request (No such key: path, at line 1, column 19 of the condition)',
    );
    expect(deny.decideRequest(variables({ arguments: { path: "/tmp/x" } }), TOOL, USER).outcome).toBe(
      "allow",
    );
    const allow = new Policies([
      rule({ name: "mine", when: "request.arguments.owner == caller.subject", effect: "allow" }),
      rule({ name: "rest", when: "true", effect: "deny" }),
    ]);
    expect(allow.decideRequest(variables(), TOOL, USER).denied?.rule).toBe("rest");
    expect(allow.decideRequest(variables({ arguments: { owner: "dev" } }), TOOL, USER).outcome).toBe("allow");
  });

  it("evaluates a rule only for the tools its condition names, deciding as evaluating it would", () => {
    const guarded = (when: string) => toolGuard(compilePolicyExpression(when) as PolicyExpression);
    expect(guarded('request.tool == "a" && request.arguments.x == 1')).toEqual(new Set(["a"]));
    expect(guarded('true && "a" == request.tool')).toEqual(new Set(["a"]));
    expect(guarded('request.tool == "a" && (request.tool == "b" && true)')).toEqual(new Set());
    expect(guarded('request.tool == "a" || request.arguments.x == 1')).toBeUndefined();
    expect(guarded('!(request.tool == "a")')).toBeUndefined();
    expect(guarded('request.tool.startsWith("a")')).toBeUndefined();
    // For its own tool a failing term still fails closed; for another the rule does not hold.
    const policies = new Policies([
      rule({
        name: "etc",
        when: 'request.tool == "ws__write_file" && request.arguments.path.startsWith("/etc")',
        effect: "deny",
      }),
    ]);
    expect(policies.decideRequest(variables(), TOOL, USER).outcome).toBe("deny");
    expect(policies.decideRequest(variables({ tool: "ws__read_file" }), TOOL, USER).outcome).toBe("allow");
    expect(policies.decideRequest(variables({ tool: "ws__read_file" }), TOOL, USER).decisions).toEqual([]);
  });

  it("decides by time, by argument values and by a tool's annotations", () => {
    const policies = new Policies([
      rule({ name: "hours", when: 'now.getHours("Europe/Berlin") < 8', effect: "deny" }),
      rule({
        name: "big",
        when: "has(request.arguments.count) && request.arguments.count > 100",
        effect: "deny",
      }),
      rule({ name: "ro", when: "request.annotations.?readOnlyHint.orValue(false) != true", effect: "deny" }),
    ]);
    const at = (iso: string, request: Record<string, unknown>) =>
      policies.decideRequest({ ...variables(request), now: new Date(iso) }, TOOL, USER).denied?.rule;
    expect(at("2026-11-29T05:00:00Z", { annotations: { readOnlyHint: true } })).toBe("hours");
    expect(
      at("2026-11-29T10:00:00Z", { annotations: { readOnlyHint: true }, arguments: { count: 101 } }),
    ).toBe("big");
    expect(
      at("2026-11-29T10:00:00Z", { annotations: { readOnlyHint: true }, arguments: { count: 7 } }),
    ).toBeUndefined();
    expect(at("2026-11-29T10:00:00Z", { annotations: {} })).toBe("ro");
  });

  it("hides from lists what a deny holds for whatever the arguments, and nothing an earlier allow may let through", () => {
    const policies = new Policies([
      rule({ name: "owner", when: "request.arguments.owner == caller.subject", effect: "allow" }),
      rule({ name: "writes", when: 'request.tool.endsWith("write_file")', effect: "deny" }),
    ]);
    expect(policies.hides(variables())).toBe(false);
    const plain = new Policies([
      rule({ name: "etc", when: 'request.arguments.path.startsWith("/etc")', effect: "deny" }),
      rule({ name: "writes", when: 'request.tool.endsWith("write_file")', effect: "deny" }),
    ]);
    // The first cannot tell without arguments: listed, and decided when the call comes.
    expect(plain.hides(variables())).toBe(false);
    const only = new Policies([
      rule({ name: "writes", when: 'request.tool.endsWith("write_file")', effect: "deny" }),
    ]);
    expect(only.hides(variables())).toBe(true);
    expect(only.hides(variables({ tool: "ws__read_file" }))).toBe(false);
  });

  it("denies a result by what it holds", () => {
    const policies = new Policies([
      rule({
        name: "no-keys",
        when: 'response.content.exists(c, c.text.contains("BEGIN PRIVATE KEY"))',
        effect: "deny",
        phase: "response",
      }),
    ]);
    expect(policies.readsResults).toBe(true);
    expect(policies.decidesRequests).toBe(false);
    const result = (text: string) => ({ ...variables(), response: { content: [{ type: "text", text }] } });
    expect(policies.decideResponse(result("-----BEGIN PRIVATE KEY-----"), USER).denied?.rule).toBe("no-keys");
    expect(policies.decideResponse(result("hello"), USER).outcome).toBe("allow");
  });
});

describe("policies on the hub's path: the agent loop and the library", () => {
  it("refuses a call the model makes with the rule's message, and lets the others through", async () => {
    const config = parseConfig(
      `servers:
  fx:
    command: ${JSON.stringify(resolve("node_modules/.bin/tsx"))}
    args: [${JSON.stringify(resolve("test/fixtures/servers/fixture-server.ts"))}]
policies:
  - name: no-shouting
    when: 'request.tool == "fx__echo" && request.arguments.message == request.arguments.message.upperAscii()'
    effect: deny
    message: the echo tool does not repeat shouting
`,
      { source: "p.yaml", env: {} },
    );
    const { hub } = await buildHub({ config, onRecordFailed: () => {} });
    await hub.start();
    const llm = await startMockLlm({
      turns: [
        {
          text: "",
          toolCalls: [
            { name: "fx__echo", arguments: { message: "HELLO" } },
            { name: "fx__echo", arguments: { message: "hello" } },
          ],
        },
        (request) => ({
          text: toolMessages(request.body)
            .map((m) => m.content)
            .join(" | "),
        }),
      ],
    });
    try {
      const run = runAgent({ hub, llm: llm.llm, messages: [{ role: "user", content: "echo twice" }] });
      const [text] = await Promise.all([collectText(run), collect(run)]);
      expect(text).toBe(
        'Error: the tool "fx__echo" could not be called: the echo tool does not repeat shouting | echo: hello',
      );
      await expect(hub.callTool("fx__echo", { message: "LOUD" })).rejects.toThrow(
        "the echo tool does not repeat shouting",
      );
    } finally {
      await llm.close();
      await hub.close();
    }
  }, 60_000);
});
