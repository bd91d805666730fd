import { describe, expect, it } from "vitest";
import { McplexError, UpstreamUnavailableError } from "../../src/errors.js";
import { redacted } from "../../src/upstream/upstream-errors.js";

describe("redacted errors", () => {
  it("keep their class, code, fields and cause", () => {
    const cause = new Error("spawn failed");
    const error = new UpstreamUnavailableError(
      "server gh is failed: token ghp_secret123 rejected",
      { server: "gh", retryAt: 1234, hint: "check the token" },
      { cause },
    );
    const clean = redacted(error, "gh", (text) => text.replaceAll("ghp_secret123", "***"));
    expect(clean).toBeInstanceOf(UpstreamUnavailableError);
    expect(clean.message).toBe("server gh is failed: token *** rejected");
    expect(clean.stack).not.toContain("ghp_secret123");
    expect(clean).toMatchObject({
      code: "UPSTREAM_UNAVAILABLE",
      server: "gh",
      retryAt: 1234,
      retryable: true,
    });
    expect(clean.hint).toBe("check the token");
    expect(clean.cause).toBe(cause);
    expect(clean.name).toBe("UpstreamUnavailableError");
  });

  it("leave an error with nothing to hide as it is", () => {
    const error = new McplexError("UPSTREAM_CLOSED", "closed", { server: "gh" });
    expect(redacted(error, "gh", (text) => text)).toBe(error);
  });
});
