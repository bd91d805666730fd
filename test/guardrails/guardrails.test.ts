import { describe, expect, it } from "vitest";
import type { CatalogTool } from "../../src/catalog/types.js";
import { parseConfig } from "../../src/config/parse-config.js";
import type { GuardrailConfig } from "../../src/config/types.js";
import { ConfigError } from "../../src/errors.js";
import { type GuardrailCheck, guardrailLayer } from "../../src/guardrails/guardrail-layer.js";
import { ibanValid, luhnValid, piiGuardrail } from "../../src/guardrails/pii-guardrail.js";
import { schemaGuardrail } from "../../src/guardrails/schema-guardrail.js";
import { secretsGuardrail } from "../../src/guardrails/secrets-guardrail.js";
import { sizeGuardrail } from "../../src/guardrails/size-guardrail.js";
import type { CallRequest, JsonObject, LayerDecision } from "../../src/hub/call-pipeline.js";

const entry = (e: Partial<GuardrailConfig> & Pick<GuardrailConfig, "guardrail">): GuardrailConfig => ({
  phase: "response",
  mode: "enforce",
  failOpen: false,
  ...e,
});

const TOOL = {
  name: "crm__lookup",
  server: "crm",
  originalName: "lookup",
  tool: {
    name: "lookup",
    inputSchema: { type: "object", properties: { id: { type: "integer" } }, required: ["id"] },
    outputSchema: { type: "object", properties: { email: { type: "string" } }, required: ["email"] },
  },
} as unknown as CatalogTool;

const text = (value: string): JsonObject => ({ content: [{ type: "text", text: value }] });

function problems(guardrails: string): string[] {
  try {
    parseConfig(`servers: {}\nguardrails:\n${guardrails}`, { source: "g.yaml", env: {} });
    return [];
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    return error.issues.map((issue) => `${issue.path}: ${issue.message}`);
  }
}

describe("guardrails: in the config", () => {
  it("reads entries with their defaults", () => {
    const config = parseConfig(
      "servers: {}\nguardrails:\n  - { guardrail: size, maxBytes: 1KiB }\n  - { guardrail: schema, tools: ['crm__*'], mode: audit }\n  - { guardrail: pii, types: { iban: audit } }\n",
      { source: "g.yaml", env: {} },
    );
    expect(config.guardrails).toEqual([
      {
        guardrail: "size",
        phase: "response",
        mode: "enforce",
        failOpen: false,
        maxBytes: 1024,
        structured: "drop",
      },
      { guardrail: "schema", phase: "both", mode: "audit", failOpen: false, tools: ["crm__*"] },
      { guardrail: "pii", phase: "response", mode: "enforce", failOpen: false, types: { iban: "audit" } },
    ]);
  });

  it("names each mistake with its fix", () => {
    expect(
      problems(
        [
          "  - { guardrail: secretz }",
          "  - { guardrail: size }",
          "  - { guardrail: size, maxBytes: 10, phase: request }",
          "  - { guardrail: pii, types: { ssn: redact } }",
          "  - { guardrail: pii, types: { email: hide } }",
          "  - { guardrail: schema, mode: block }",
          "  - { guardrail: schema, maxBytes: 10 }",
        ].join("\n"),
      ),
    ).toEqual([
      'guardrails[0].guardrail: must be one of size, schema, pii, secrets, injection, webhook, not "secretz"',
      'guardrails[1]: size needs maxBytes (such as "256KiB") or maxTokens (such as 20000), or both',
      "guardrails[2].phase: size acts on results; leave phase out or set it to response",
      'guardrails[3].types.ssn: unknown key "ssn"; valid keys: email, phone, card, iban',
      'guardrails[4].types.email: must be redact or audit, not "hide"',
      'guardrails[5].mode: must be enforce or audit, not "block"',
      'guardrails[6].maxBytes: unknown key "maxBytes"; valid keys: guardrail, servers, tools, profiles, phase, mode, failOpen',
    ]);
  });
});

describe("the guardrails", () => {
  it("size: cuts text from the end to the bound, with a note, and drops or refuses structured content", () => {
    const check = sizeGuardrail(entry({ guardrail: "size", maxBytes: 600 }));
    expect(check.response!(text("short"), TOOL)).toEqual({ action: "pass" });
    const big = {
      content: [
        { type: "text", text: "a".repeat(300) },
        { type: "text", text: "b".repeat(900) },
      ],
    };
    const cut = check.response!(big, TOOL);
    expect(cut.action).toBe("rewrite");
    if (cut.action !== "rewrite") return;
    expect(Buffer.byteLength(JSON.stringify(cut.value))).toBeLessThanOrEqual(600);
    const parts = cut.value.content as { text: string }[];
    expect(parts[0]!.text).toBe("a".repeat(300));
    expect(parts[1]!.text).toMatch(/^b{50,}$/);
    expect(parts[2]!.text).toMatch(
      /^\[mcplex: this result was \d+ bytes \(limit 600\); it was cut to fit\]$/,
    );
    const structured = { ...big, structuredContent: { n: 1 } };
    const dropped = check.response!(structured, TOOL);
    expect(dropped.action === "rewrite" && dropped.value.structuredContent).toBe(undefined);
    const refusing = sizeGuardrail(entry({ guardrail: "size", maxBytes: 600, structured: "refuse" }));
    expect(refusing.response!(structured, TOOL).action).toBe("refuse");
    const tokens = sizeGuardrail(entry({ guardrail: "size", maxTokens: 10 })).response!(
      text("x".repeat(100)),
      TOOL,
    );
    expect(tokens.action === "rewrite" && (tokens.value.content as { text: string }[])[0]!.text).toBe(
      "x".repeat(40),
    );
  });

  it("schema: refuses arguments and structured results that do not match the tool's schemas", () => {
    const check = schemaGuardrail();
    expect(check.request!({ id: 7 }, TOOL)).toEqual({ action: "pass" });
    expect(check.request!({ id: "seven" }, TOOL)).toEqual({
      action: "refuse",
      message: "the arguments do not match its inputSchema: /id must be integer",
    });
    expect(check.request!({}, TOOL)).toMatchObject({
      message: expect.stringContaining("must have required property 'id'"),
    });
    expect(check.response!({ content: [], structuredContent: { email: "a@b.co" } }, TOOL)).toEqual({
      action: "pass",
    });
    expect(check.response!({ content: [], structuredContent: { email: 3 } }, TOOL).action).toBe("refuse");
    expect(check.response!({ content: [] }, TOOL)).toMatchObject({ action: "refuse" });
    expect(check.response!({ content: [], isError: true }, TOOL)).toEqual({ action: "pass" });
  });

  it("pii: redacts or counts each kind, and takes only numbers that pass their check", () => {
    expect(luhnValid("4111 1111 1111 1111")).toBe(true);
    expect(luhnValid("4111 1111 1111 1112")).toBe(false);
    expect(ibanValid("DE89 3704 0044 0532 0130 00")).toBe(true);
    expect(ibanValid("DE89 3704 0044 0532 0130 01")).toBe(false);
    const check = piiGuardrail(entry({ guardrail: "pii", types: { phone: "audit" } }));
    const result = check.response!(
      {
        content: [
          {
            type: "text",
            text: "Ada <ada@example.com>, +44 20 7946 0958, card 4111 1111 1111 1111, not 4111 1111 1111 1112, IBAN DE89 3704 0044 0532 0130 00",
          },
        ],
        structuredContent: { contact: { email: "bob@example.org" } },
      },
      TOOL,
    );
    expect(result).toEqual({
      action: "rewrite",
      detail: "2 emails redacted, 1 phone seen, 1 card redacted, 1 IBAN redacted",
      value: {
        content: [
          {
            type: "text",
            text: "Ada <[email redacted]>, +44 20 7946 0958, card [card redacted], not 4111 1111 1111 1112, IBAN [IBAN redacted]",
          },
        ],
        structuredContent: { contact: { email: "[email redacted]" } },
      },
    });
    const onlyPhone = check.response!(text("call +1 (555) 123-4567"), TOOL);
    expect(onlyPhone).toEqual({ action: "note", detail: "1 phone seen" });
    expect(check.response!(text("nothing here, order 2026-11-29 #12345"), TOOL)).toEqual({ action: "pass" });
  });
});

describe("the secrets guardrail (secretlint's recommended rules)", () => {
  const GITHUB = "ghp_aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789";
  const SLACK = "xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx";

  it("redacts credentials in arguments and results, naming the rules that found them", async () => {
    const check = secretsGuardrail(entry({ guardrail: "secrets", phase: "both", action: "redact" }));
    expect(await check.request!({ note: `use ${GITHUB} please`, n: 1 }, TOOL)).toEqual({
      action: "rewrite",
      value: { note: "use [secret redacted] please", n: 1 },
      detail: "1 credential (github) in the arguments redacted",
    });
    expect(
      await check.response!(
        { content: [{ type: "text", text: `${SLACK} and ${GITHUB}` }], structuredContent: { t: SLACK } },
        TOOL,
      ),
    ).toEqual({
      action: "rewrite",
      value: {
        content: [{ type: "text", text: "[secret redacted] and [secret redacted]" }],
        structuredContent: { t: "[secret redacted]" },
      },
      detail: "3 credentials (github, slack) in the result redacted",
    });
    expect(await check.response!(text("nothing secret in a long enough sentence"), TOOL)).toEqual({
      action: "pass",
    });
  });

  it("blocks instead when told to", async () => {
    const check = secretsGuardrail(entry({ guardrail: "secrets", phase: "both", action: "block" }));
    expect(await check.request!({ token: GITHUB }, TOOL)).toEqual({
      action: "refuse",
      message: "1 credential (github) in the arguments; nothing with a credential in it passes",
    });
  });
});

describe("a guardrail's layer", () => {
  const request = (args: JsonObject, profile?: string): CallRequest =>
    ({
      id: 1,
      method: "tools/call",
      params: { name: TOOL.name, arguments: args },
      target: { kind: "tool", name: TOOL.name, server: TOOL.server, tool: TOOL },
      context: { stateless: false, signal: new AbortController().signal, profile },
      callOptions: {},
    }) as unknown as CallRequest;
  const counted: string[] = [];
  const count = (name: string, effect: string) => void counted.push(`${name}:${effect}`);
  const echo = async (sent: CallRequest): Promise<JsonObject> =>
    text(`got ${JSON.stringify(sent.params.arguments)}`);

  it("enforces, audits without changing, and fails closed unless failOpen", async () => {
    const pii = piiGuardrail(entry({ guardrail: "pii" }));
    const enforce = guardrailLayer(entry({ guardrail: "pii" }), pii, count)(echo);
    const r1 = request({ to: "ada@example.com" });
    expect(await enforce(r1)).toEqual(text('got {"to":"[email redacted]"}'));
    expect(r1.context.decisions).toEqual<LayerDecision[]>([
      {
        by: "guardrail",
        name: "pii",
        effect: "rewrote",
        phase: "response",
        detail: "1 email redacted",
        target: "crm__lookup",
      },
    ]);
    const audit = guardrailLayer(entry({ guardrail: "pii", mode: "audit" }), pii, count)(echo);
    const r2 = request({ to: "ada@example.com" });
    expect(await audit(r2)).toEqual(text('got {"to":"ada@example.com"}'));
    expect(r2.context.decisions?.map((d) => d.effect)).toEqual(["would-rewrite"]);
    const broken: GuardrailCheck = {
      request: () => {
        throw new Error("schema does not compile");
      },
    };
    const closed = guardrailLayer(entry({ guardrail: "schema", phase: "request" }), broken, count)(echo);
    await expect(closed(request({}))).rejects.toThrow(
      "crm__lookup: refused by the schema guardrail: the schema guardrail failed (schema does not compile)",
    );
    const open = guardrailLayer(
      entry({ guardrail: "schema", phase: "request", failOpen: true }),
      broken,
      count,
    )(echo);
    expect(await open(request({ id: 1 }))).toEqual(text('got {"id":1}'));
    expect(counted).toEqual([
      "pii:rewrote",
      "pii:would-rewrite",
      "schema:failed-closed",
      "schema:failed-open",
    ]);
  });

  it("acts only on the calls its servers, tools and profiles pick", async () => {
    const pii = piiGuardrail(entry({ guardrail: "pii" }));
    const layer = (e: Partial<GuardrailConfig>) =>
      guardrailLayer(entry({ guardrail: "pii", ...e }), pii, count)(echo);
    const email = { to: "ada@example.com" };
    const redacted = text('got {"to":"[email redacted]"}');
    const kept = text('got {"to":"ada@example.com"}');
    expect(await layer({ servers: ["crm"] })(request(email))).toEqual(redacted);
    expect(await layer({ servers: ["billing"] })(request(email))).toEqual(kept);
    expect(await layer({ tools: ["crm__*"] })(request(email))).toEqual(redacted);
    expect(await layer({ tools: ["crm__other"] })(request(email))).toEqual(kept);
    expect(await layer({ profiles: ["support"] })(request(email, "support"))).toEqual(redacted);
    expect(await layer({ profiles: ["support"] })(request(email))).toEqual(kept);
  });
});
