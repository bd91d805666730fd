import { describe, expect, it } from "vitest";
import { expandVariables } from "../../src/config/expand-variables.js";
import {
  envNameProblem,
  remoteUrlProblem,
  runnerArgumentProblem,
  versionProblem,
} from "../../src/registry/entry-rules.js";
import { configLiteral, joinConfigText, printable, printableJson } from "../../src/registry/registry-text.js";
import { planEntry } from "../../src/registry/server-entry.js";

/** A context in which any reference that expands would show: every variable and secret is set. */
const LOUD = {
  env: new Proxy({}, { get: () => "EXPANDED" }) as Record<string, string>,
  secret: () => "SECRET",
};

describe("configLiteral", () => {
  it.each([
    "${secret:other.API_KEY}",
    "${MCPLEX_SECRET_KEY}",
    "${A:-${B}}",
    "$${HOME}",
    "$$${HOME}",
    "$",
    "a$",
    "$$",
    "${",
    "}${x",
    "${user:NAME}",
    "${input:x}",
    "price: $5 {not a reference}",
  ])("%s loads back as itself", (text) => {
    expect(expandVariables(configLiteral(text), LOUD, "x")).toBe(text);
  });
});

describe("joinConfigText", () => {
  it("joins pieces that make no reference of their own", () => {
    expect(joinConfigText(["Bearer ", "${secret:a.b}", "$"])).toBe("Bearer ${secret:a.b}$");
  });

  it("refuses a $ that would meet the { of the next piece", () => {
    expect(joinConfigText(["pre$", "{HOME}"])).toBeUndefined();
    expect(joinConfigText(["$", "${secret:a.b}"])).toBeUndefined();
    expect(joinConfigText(["a$", "", "{x}"])).toBeUndefined();
  });

  it("makes a registry template refuse a user's value that would complete its $ into a reference", () => {
    const plan = planEntry(
      {
        name: "a/b",
        packages: [
          {
            registryType: "npm",
            identifier: "b",
            version: "1.0.0",
            environmentVariables: [{ name: "X", value: "cost${v}", variables: { v: { isRequired: true } } }],
          },
        ],
      },
      { hasProgram: () => true },
    );
    expect(plan.build(() => "abc").env).toEqual({ X: "cost$abc" });
    expect(() => plan.build(() => "{HOME}")).toThrow(/environmentVariables\[0\]\.value .* is refused/);
  });
});

describe("container mounts", () => {
  const oci = (runtimeArguments: unknown[]) => () =>
    planEntry(
      {
        name: "a/img",
        packages: [{ registryType: "oci", identifier: "example/img:1.0.0", runtimeArguments } as never],
      },
      { hasProgram: () => true },
    );

  it("refuses a host directory the registry chose or fills in, and takes one the user is asked for", () => {
    expect(oci([{ type: "named", name: "-v", value: "/:/host" }])).toThrow(/host directory/);
    expect(oci([{ type: "named", name: "--mount", value: "type=bind,source=/etc,dst=/e" }])).toThrow(
      /host directory/,
    );
    expect(
      oci([{ type: "named", name: "-v", value: "{d}:/data", variables: { d: { default: "/home" } } }]),
    ).toThrow(/fills in/);
    expect(oci([{ type: "named", name: "--mount=type=bind,src=/,dst=/h" }])).toThrow(/value/);
    expect(
      oci([{ type: "named", name: "-v", value: "{d}:/data", variables: { d: { isRequired: true } } }]),
    ).not.toThrow();
    expect(oci([{ type: "named", name: "-v", value: "cache:/cache" }])).not.toThrow();
    expect(oci([{ type: "named", name: "--mount", value: "type=volume,src=cache,dst=/c" }])).not.toThrow();
  });
});

describe("printable", () => {
  it("takes out ESC, CSI, OSC, BEL, C1 and bidirectional marks; a line break becomes a space", () => {
    const shown = printable("a\u001b[2J\u001b]0;t\u0007b\u009b31m\u202ec\nd\te");
    expect(shown).toBe("a[2J]0;tb31mc d e");
  });

  it("printableJson escapes what JSON.stringify leaves, and parses back to the same value", () => {
    const value = { d: "x\u009b31m\u007f\u202e\u001b" };
    const json = printableJson(value);
    expect(
      [...json].filter((c) => c.charCodeAt(0) < 0x20 || (c >= "\u007f" && c <= "\u009f") || c === "\u202e"),
    ).toEqual([]);
    expect(JSON.parse(json)).toEqual(value);
  });
});

describe("entry rules", () => {
  it("lets ordinary variable names through, and NODE_ENV", () => {
    for (const name of ["DATABASE_URL", "API_KEY", "NODE_ENV", "_X1"])
      expect(envNameProblem(name)).toBeUndefined();
  });

  it("refuses names that change how a runtime loads code, in any case, and misspelled names", () => {
    for (const name of ["NODE_OPTIONS", "node_options", "LD_AUDIT", "npm_config_registry", "Npm_Config_x"])
      expect(envNameProblem(name)).toMatch(/loads code/);
    for (const name of ["1X", "A-B", "a b", "X=Y"]) expect(envNameProblem(name)).toBeDefined();
  });

  it("takes exact versions only", () => {
    expect(versionProblem("npm", "1.2.3-rc.1+build.5")).toBeUndefined();
    expect(versionProblem("pypi", "2.0rc1")).toBeUndefined();
    expect(versionProblem("pypi", "1.0.post2")).toBeUndefined();
    expect(versionProblem("oci", "0.9.2")).toBeUndefined();
    for (const [type, version] of [
      ["npm", "latest"],
      ["npm", "~1.2.3"],
      ["npm", "1.2"],
      ["npm", "1.2.3 || 2.0.0"],
      ["pypi", "==1.0"],
      ["pypi", "1.*"],
      ["oci", "latest"],
      ["npm", undefined],
    ] as const)
      expect(versionProblem(type, version), `${type} ${version}`).toBeDefined();
  });

  it("takes https remotes, and http only to this machine", () => {
    expect(remoteUrlProblem("https://mcp.example.com/mcp")).toBeUndefined();
    expect(remoteUrlProblem("http://127.0.0.1:8080/mcp")).toBeUndefined();
    expect(remoteUrlProblem("http://localhost/mcp")).toBeUndefined();
    expect(remoteUrlProblem("http://[::1]/mcp")).toBeUndefined();
    for (const url of ["http://example.com/", "file:///etc/passwd", "ws://x/", "https://u:p@x/", "not a url"])
      expect(remoteUrlProblem(url), url).toBeDefined();
  });

  it("refuses the runner's flags in both spellings and lets the package's own through", () => {
    for (const arg of ["--registry=https://x", "--registry", "--index-url", "-i", "--@s:registry=x"])
      expect(runnerArgumentProblem(arg), arg).toBeDefined();
    for (const arg of ["--units", "metric", "--read-only", "/srv"])
      expect(runnerArgumentProblem(arg)).toBeUndefined();
  });
});
