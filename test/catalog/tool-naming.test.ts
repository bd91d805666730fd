import { describe, expect, it } from "vitest";
import {
  assignNames,
  EXPOSED_NAME_PATTERN,
  hashedName,
  type NameCandidate,
  nameHash,
  plainName,
  sanitizeName,
} from "../../src/catalog/index.js";
import { rng, shuffled, uglyName } from "./fixtures.js";

function candidate(server: string, originalName: string, prefix = server): NameCandidate {
  return { server, originalName, plain: plainName(prefix, originalName) };
}

function namesOf(candidates: NameCandidate[]): Map<string, string> {
  const { names } = assignNames(candidates);
  return new Map(candidates.map((c, i) => [`${c.server}\0${c.originalName}`, names[i]!]));
}

describe("sanitizeName and plainName", () => {
  it("replaces every code point outside [A-Za-z0-9_-] with one underscore", () => {
    expect(sanitizeName("a.b/c d:é🙂")).toBe("a_b_c_d___");
    expect(sanitizeName("Ok_name-1")).toBe("Ok_name-1");
  });

  it("joins prefix and name with a double underscore, sanitising both", () => {
    expect(plainName("git.hub", "search.code")).toBe("git_hub__search_code");
    expect(plainName("", "search.code")).toBe("search_code");
  });

  it("hashes the full original pair, server and name apart", () => {
    expect(nameHash("a", "bc")).not.toBe(nameHash("ab", "c"));
    expect(nameHash("s", "t")).toMatch(/^[0-9a-f]{8}$/);
    expect(hashedName("x".repeat(100), "12345678")).toHaveLength(64);
  });
});

describe("assignNames", () => {
  it("always produces names matching ^[A-Za-z0-9_-]{1,64}$, unique, for ugly random names", () => {
    const next = rng(42);
    const candidates: NameCandidate[] = [];
    const seen = new Set<string>();
    for (let i = 0; i < 3000; i++) {
      const server = i % 7 === 0 ? uglyName(next, 20) : `s${i % 5}`;
      const prefix = i % 3 === 0 ? "" : i % 3 === 1 ? server : uglyName(next, 10);
      const name = uglyName(next);
      const key = `${server}\0${name}`;
      if (seen.has(key)) continue;
      seen.add(key);
      candidates.push(candidate(server, name, prefix));
    }
    candidates.push(candidate("s", "", ""), candidate("s", "x".repeat(128), ""), candidate("t", "...", ""));
    const { names } = assignNames(candidates);
    for (const name of names) expect(name).toMatch(EXPOSED_NAME_PATTERN);
    expect(new Set(names).size).toBe(names.length);
  });

  it("gives a name that is empty after sanitising a hashed name", () => {
    const { names } = assignNames([candidate("s", "", "")]);
    expect(names[0]).toMatch(/^_[0-9a-f]{8}$/);
  });

  it("does not depend on the order of the candidates", () => {
    const next = rng(7);
    const base = [
      candidate("a", "search", ""),
      candidate("b", "search", ""),
      candidate("a", "x.y"),
      candidate("a", "x_y"),
      candidate("c", "z".repeat(100)),
      ...Array.from({ length: 200 }, (_, i) => candidate(`s${i % 4}`, `t${i}.${uglyName(next, 20)}`)),
    ];
    const expected = namesOf(base);
    for (let round = 0; round < 20; round++) expect(namesOf(shuffled(base, next))).toEqual(expected);
  });

  it("keeps a 100-character dotted name valid and distinct from its sanitised twin", () => {
    const dotted = Array.from({ length: 50 }, (_, i) => String.fromCharCode(97 + (i % 26))).join(".");
    expect(dotted).toHaveLength(99);
    const long = `${dotted}.`;
    const { names } = assignNames([candidate("srv", long), candidate("srv", long.replaceAll(".", "_"))]);
    expect(names[0]).toMatch(EXPOSED_NAME_PATTERN);
    expect(names[0]).toHaveLength(64);
    expect(names[0]!.startsWith("srv__a_b_c_")).toBe(true);
    expect(names[0]).not.toBe(names[1]);
  });

  it("gives long names sharing their first 64 characters different hash suffixes", () => {
    const head = "n".repeat(70);
    const { names, collisions } = assignNames([candidate("s", `${head}1`), candidate("s", `${head}2`)]);
    expect(names[0]).not.toBe(names[1]);
    expect(names[0]!.slice(0, 55)).toBe(names[1]!.slice(0, 55));
    expect(collisions).toEqual([]);
  });

  it("gives every member of a collision the hashed form and reports it", () => {
    const { names, collisions } = assignNames([candidate("a", "x.y"), candidate("a", "x_y")]);
    expect(names[0]).toBe(`a__x_y_${nameHash("a", "x.y")}`);
    expect(names[1]).toBe(`a__x_y_${nameHash("a", "x_y")}`);
    expect(collisions).toEqual([
      {
        name: "a__x_y",
        members: [
          { server: "a", originalName: "x.y", exposedName: names[0] },
          { server: "a", originalName: "x_y", exposedName: names[1] },
        ],
      },
    ]);
  });

  it("resolves collisions across servers sharing no prefix", () => {
    const { names, collisions } = assignNames([candidate("a", "search", ""), candidate("b", "search", "")]);
    expect(names[0]).toMatch(/^search_[0-9a-f]{8}$/);
    expect(names[1]).toMatch(/^search_[0-9a-f]{8}$/);
    expect(names[0]).not.toBe(names[1]);
    expect(collisions.map((c) => c.name)).toEqual(["search"]);
  });

  it("detects collisions made by the prefix separator itself", () => {
    const { names, collisions } = assignNames([candidate("a", "b__c"), candidate("a__b", "c")]);
    expect(names[0]).not.toBe(names[1]);
    expect(collisions).toHaveLength(1);
  });

  it("re-hashes a pathological clash between a hashed name and a listed one", () => {
    const victim = candidate("a", "x.y");
    const twin = candidate("a", "x_y");
    const squatter = `a__x_y_${nameHash("a", "x.y")}`;
    const cands = [victim, twin, candidate("b", squatter, "")];
    const { names, collisions } = assignNames(cands);
    expect(new Set(names).size).toBe(3);
    for (const name of names) expect(name).toMatch(EXPOSED_NAME_PATTERN);
    expect(collisions.some((c) => c.name === squatter)).toBe(true);
  });
});
