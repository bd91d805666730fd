import { describe, expect, it } from "vitest";
import { parseConfig, redact, redactor } from "../../src/config/index.js";

describe("redact", () => {
  it("replaces every occurrence of each secret", () => {
    expect(redact("token ghp_abc123 and again ghp_abc123", ["ghp_abc123"])).toBe("token *** and again ***");
  });

  it("replaces longer secrets first so no tail of one is left", () => {
    expect(redact("Authorization: Bearer tok-12345", ["tok-12345", "Bearer tok-12345"])).toBe(
      "Authorization: ***",
    );
  });

  it("replaces short secrets only where they stand alone", () => {
    expect(redact("KEY=abc; abcdef stays; (abc)", ["abc"])).toBe("KEY=***; abcdef stays; (***)");
  });

  it("ignores empty secrets and escapes regex characters", () => {
    expect(redact("a.b a+b", ["", "a+"])).toBe("a.b a+b");
    expect(redact("x a+b y", ["a+b"])).toBe("x *** y");
  });
});

describe("redactor", () => {
  it("redacts text after text as redact does, its prepared patterns reused", () => {
    const secrets = ["abc", "long-secret-1", "Bearer long-secret-1"];
    const hide = redactor(secrets);
    const texts = ["KEY=abc and abc", "Bearer long-secret-1 then abc", "abcdef stays", "KEY=abc", ""];
    for (const text of [...texts, ...texts]) expect(hide(text)).toBe(redact(text, secrets));
    expect(hide("KEY=abc, abc")).toBe("KEY=***, ***");
    expect(redactor([])("nothing to hide")).toBe("nothing to hide");
  });
});

describe("secrets collected while loading", () => {
  const load = (text: string, env: Record<string, string> = {}) =>
    parseConfig(text, { source: "mcplex.yaml", env });

  it("collects credential-named env values and headers, with the bare bearer token", () => {
    const config = load(
      "servers:\n  a:\n    command: x\n    env:\n      API_KEY: key-value-1\n      DB_PASSWORD: pw-value-22\n      LOG_LEVEL: debug\n  b:\n    url: https://h/mcp\n    headers:\n      Authorization: Bearer bearer-value-3\n      Accept: application/json\n",
    );
    expect(config.secrets).toEqual(
      expect.arrayContaining(["key-value-1", "pw-value-22", "Bearer bearer-value-3", "bearer-value-3"]),
    );
    expect(config.secrets).not.toContain("debug");
    expect(config.secrets).not.toContain("application/json");
  });

  it("does not take settings under secret-looking names for credentials", () => {
    const config = load(
      "servers:\n  a:\n    command: x\n    env:\n      MAX_TOKENS: 4096\n      USE_AUTH: true\n",
    );
    expect(config.secrets).toEqual([]);
  });

  it("collects URL passwords and secret query parameters, llm.apiKey and tokens", () => {
    const config = load(
      "servers:\n  a:\n    url: https://user:url-pass-99@h/mcp?api_key=query-key-77&page=2\nllm:\n  apiKey: sk-llm-key\ntokens:\n  - token: gateway-token-value\n",
    );
    expect(config.secrets).toEqual(
      expect.arrayContaining(["url-pass-99", "query-key-77", "sk-llm-key", "gateway-token-value"]),
    );
    expect(config.secrets).not.toContain("2");
  });
});

describe("encoded secrets", () => {
  const secret = 'p@ss"w/rd+é x?';
  const b64 = (text: string) => Buffer.from(text).toString("base64");

  it("hides the JSON-escaped, percent-encoded, base64 and base64url forms", () => {
    const hide = redactor([secret]);
    for (const form of [
      JSON.stringify(secret).slice(1, -1),
      encodeURIComponent(secret),
      b64(secret),
      Buffer.from(secret).toString("base64url"),
    ]) {
      expect(hide(`got ${form} back`)).toBe("got *** back");
    }
  });

  it("hides base64 of a longer text at each of the three byte alignments", () => {
    const hide = redactor([secret]);
    for (const prefix of ["", "x", "xy", "Bearer "]) {
      const encoded = b64(`${prefix}${secret} and more`);
      const shown = hide(encoded);
      expect(shown).toContain("***");
      // What is left around the redaction decodes to at most 2 bytes of the secret on each side.
      for (const part of shown.split("***"))
        for (let phase = 0; phase < 4; phase++)
          expect(Buffer.from(part.slice(phase), "base64").toString("latin1")).not.toContain('ss"w');
    }
  });

  it("does not hunt for encoded forms of short secrets", () => {
    // base64 of "abc" is "YWJj": a 3-letter secret would otherwise redact that run anywhere.
    expect(redactor(["abc"])("YWJjZGVm and YWJj")).toBe("YWJjZGVm and YWJj");
    // A 4-byte secret: its standalone base64 (8 characters with padding) is hidden, but the
    // 5-character fragment that would find it inside longer base64 is too common to hunt for.
    expect(redactor(["abcd"])("YWJjZA== and YWJjZGVmZ2g=")).toBe("*** and YWJjZGVmZ2g=");
  });
});
