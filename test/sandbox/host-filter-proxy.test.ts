/** Which hosts a sandbox's network list lets through its proxy. */
import { describe, expect, it } from "vitest";
import { hostAllowed } from "../../src/sandbox/host-filter-proxy.js";

describe("a sandbox's host list", () => {
  const list = ["api.github.com", "*.example.com", "127.0.0.1:8080", "[::1]:9000"];

  it("lets a listed name through on any port, without regard to case", () => {
    expect(hostAllowed(list, "api.github.com", 443)).toBe(true);
    expect(hostAllowed(list, "API.GitHub.com", 80)).toBe(true);
  });

  it("lets the subdomains of a wildcard through, not the domain itself or look-alikes", () => {
    expect(hostAllowed(list, "a.example.com", 443)).toBe(true);
    expect(hostAllowed(list, "a.b.example.com", 443)).toBe(true);
    expect(hostAllowed(list, "example.com", 443)).toBe(false);
    expect(hostAllowed(list, "evilexample.com", 443)).toBe(false);
  });

  it("holds a listed port to that port", () => {
    expect(hostAllowed(list, "127.0.0.1", 8080)).toBe(true);
    expect(hostAllowed(list, "127.0.0.1", 8081)).toBe(false);
    expect(hostAllowed(list, "::1", 9000)).toBe(true);
    expect(hostAllowed(list, "[::1]", 9001)).toBe(false);
  });

  it("refuses what is not listed", () => {
    expect(hostAllowed(list, "github.com", 443)).toBe(false);
    expect(hostAllowed(list, "api.github.com.evil.net", 443)).toBe(false);
    expect(hostAllowed([], "api.github.com", 443)).toBe(false);
  });
});
