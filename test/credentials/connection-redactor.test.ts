import { describe, expect, it } from "vitest";
import { SecretSet } from "../../src/config/redact.js";
import { ConnectionRedactor, MAX_CONNECTION_TOKENS } from "../../src/credentials/connection-redactor.js";

describe("a user's connection redactor", () => {
  it("redacts the config's secrets and the user's own, and follows the config's as they grow", () => {
    const shared = new SecretSet(["operator-secret-1"]);
    const redactor = new ConnectionRedactor(shared, { KEY: "users-own-value", SHORT: "abc" });
    expect(redactor.redact("operator-secret-1 users-own-value abc")).toBe("*** *** abc");
    shared.add(["operator-secret-2"]);
    expect(redactor.redact("operator-secret-2")).toBe("***");
    // The user's value was never added to the shared set.
    expect(shared.redact("users-own-value")).toBe("users-own-value");
  });

  it("hides the whole of a longer secret that holds the user's value", () => {
    const redactor = new ConnectionRedactor(new SecretSet(["xx-users-own-value-yy"]), {
      KEY: "users-own-value",
    });
    expect(redactor.redact("[xx-users-own-value-yy]")).toBe("[***]");
  });

  it("keeps only the newest tokens it was given", () => {
    const redactor = new ConnectionRedactor(new SecretSet([]), {});
    for (let i = 0; i < 3 * MAX_CONNECTION_TOKENS; i++) redactor.addToken(`token-number-${i}`);
    expect(redactor.size).toBe(MAX_CONNECTION_TOKENS);
    expect(redactor.redact(`token-number-${3 * MAX_CONNECTION_TOKENS - 1}`)).toBe("***");
    expect(redactor.redact("token-number-0")).toBe("token-number-0");
  });
});
