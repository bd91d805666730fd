import { describe, expect, it } from "vitest";
import {
  emailPatternProblem,
  isEmailAddress,
  stringList,
  wholeMatcher,
} from "../../src/config/claim-matchers.js";

describe("how access rules compare claims", () => {
  it("takes one whole valid address as an email, nothing around it", () => {
    for (const good of ["ann@example.com", "a.b+tag@sub.example.co", "x@localhost"])
      expect(isEmailAddress(good)).toBe(true);
    for (const bad of [
      "x@evil.com,y@example.com",
      "x@evil.com\n@example.com",
      "x@evil.com @example.com",
      "Eve <x@example.com>",
      "x@@example.com",
      "@example.com",
      "x@-example.com",
      "x@example.com.",
      `${"a".repeat(250)}@example.com`,
    ])
      expect(isEmailAddress(bad)).toBe(false);
  });

  it("matches email patterns whole and without regard to case, * never crossing the @", () => {
    const domain = wholeMatcher(["*@example.com"], { email: true });
    expect(domain("Ann@Example.COM")).toBe(true);
    expect(domain("x@sub.example.com")).toBe(false);
    expect(domain("x@evilexample.com")).toBe(false);
    expect(domain("x@evil.com,y@example.com")).toBe(false);
    const subdomains = wholeMatcher(["*@*.example.com"], { email: true });
    expect(subdomains("x@a.b.example.com")).toBe(true);
    expect(subdomains("x@example.com")).toBe(false);
  });

  it("treats every character of a sub pattern but * as itself", () => {
    const match = wholeMatcher(["svc-*", "a.b", "{x,y}"]);
    expect(match("svc-deploy")).toBe(true);
    expect(match("svc-")).toBe(true);
    expect(match("axb")).toBe(false);
    expect(match("a.b")).toBe(true);
    expect(match("x")).toBe(false);
    expect(match("{x,y}")).toBe(true);
    expect(match("root-svc-x")).toBe(false);
  });

  it("takes a list claim only as a list of strings", () => {
    expect(stringList(["a", "b"])).toEqual(["a", "b"]);
    expect(stringList("a b")).toEqual([]);
    expect(stringList(["a", 1])).toEqual([]);
    expect(stringList({ 0: "a" })).toEqual([]);
  });

  it("accepts an email pattern that is an address with * in it, and says how to write one otherwise", () => {
    expect(emailPatternProblem("*@example.com")).toBeUndefined();
    expect(emailPatternProblem("ann@example.com")).toBeUndefined();
    expect(emailPatternProblem("@example.com")).toContain('"*@example.com"');
    expect(emailPatternProblem("*example.com")).toBeDefined();
    expect(emailPatternProblem("*")).toBeDefined();
  });
});
