import { describe, expect, it } from "vitest";
import { MIN_TOKEN_LENGTH, tokenProblem } from "../../src/config/token-rules.js";
import { parseBearer } from "../../src/fronts/authenticator.js";

/** Authorization value, and the token RFC 6750 reads from it ("none": no bearer credential; "bad": malformed). */
const TABLE: Array<[string | undefined, string]> = [
  ["Bearer abc", "abc"],
  ["bearer abc", "abc"],
  ["BeArEr   abc", "abc"],
  ["Bearer\tabc", "abc"],
  ["Bearer abc \t ", "abc"],
  ["Bearer a-b.c_d~e+f/g==", "a-b.c_d~e+f/g=="],
  [undefined, "none"],
  ["", "none"],
  ["Bearer", "none"],
  ["Bearerabc", "none"],
  ["Basic YWxhZGRpbjpvcGVu", "none"],
  ["Bearer \u00A0", "bad"],
  ["Bearer \u00A0abc", "bad"],
  ["Bearer abc\u00A0", "bad"],
  ["Bearer\u00A0abc", "none"],
  ["Bearer abc def", "bad"],
  ["Bearer abc,", "abc,"],
  ["Bearer abc\u2003", "bad"],
  ["Bearer \u00E9t\u00E9", "bad"],
];

describe("parseBearer", () => {
  it.each(TABLE)("reads %j as %j", (header, expected) => {
    const parsed = parseBearer(header);
    const got = parsed.kind === "token" ? parsed.token : parsed.kind === "none" ? "none" : "bad";
    expect(got).toBe(expected);
  });
});

describe("tokenProblem", () => {
  it("accepts a random token of the minimum length or more", () => {
    expect(tokenProblem("x".repeat(MIN_TOKEN_LENGTH))).toBeUndefined();
    expect(tokenProblem("3f9a0c1e5b7d2468ace13579bdf02468")).toBeUndefined();
  });

  it.each([
    "",
    " ",
    "\u00A0",
    "\t\t",
    "x".repeat(MIN_TOKEN_LENGTH - 1),
    `${"x".repeat(20)} y`,
    `${"x".repeat(20)}\u00E9`,
  ])("refuses %j, saying the minimum and never the token", (token) => {
    const problem = tokenProblem(token);
    expect(problem).toMatch(/at least 16 characters/);
    if (token.trim() !== "") expect(problem).not.toContain(token);
  });
});
