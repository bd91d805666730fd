import { describe, expect, it } from "vitest";
import { planEntry } from "../../src/registry/server-entry.js";

/** Which way of running a registry server `add` picks on a machine with the given programs. */
const on =
  (...programs: string[]) =>
  (name: string) =>
    programs.includes(name);

const BOTH = {
  name: "io.github.example/both",
  version: "2.0.0",
  packages: [
    { registryType: "oci", identifier: "ghcr.io/example/both:2.0.0", transport: { type: "stdio" } },
    { registryType: "pypi", identifier: "both-mcp", version: "2.0.0", transport: { type: "stdio" } },
  ],
  remotes: [{ type: "sse", url: "https://both.example.com/sse" }],
};

describe("planEntry", () => {
  it("takes the first package this machine can run", () => {
    expect(planEntry(BOTH, { hasProgram: on("uvx", "docker") }).source).toBe(
      "oci ghcr.io/example/both:2.0.0",
    );
    expect(planEntry(BOTH, { hasProgram: on("uvx") }).source).toBe("pypi both-mcp==2.0.0");
    const podman = planEntry(BOTH, { hasProgram: on("podman") }).build(() => undefined);
    expect(podman).toMatchObject({
      command: "podman",
      args: ["run", "--rm", "-i", "ghcr.io/example/both:2.0.0"],
    });
  });

  it("falls back to a remote when no package can run here", () => {
    const plan = planEntry(BOTH, { hasProgram: on() });
    expect(plan.stdio).toBe(false);
    expect(plan.build(() => undefined)).toEqual({ url: "https://both.example.com/sse", transport: "sse" });
  });

  it("tags an OCI image that gives its version apart, and keeps a digest as it is", () => {
    const tagged = {
      ...BOTH,
      packages: [{ registryType: "oci", identifier: "example/old", version: "1.2.3" }],
    };
    expect(planEntry(tagged, { hasProgram: on("docker") }).source).toBe("oci example/old:1.2.3");
    const digest = {
      ...BOTH,
      packages: [{ registryType: "oci", identifier: "example/x@sha256:abc", version: "1" }],
    };
    expect(planEntry(digest, { hasProgram: on("docker") }).source).toBe("oci example/x@sha256:abc");
  });

  it("writes switches, named and positional arguments in order", () => {
    const server = {
      name: "io.github.example/args",
      packages: [
        {
          registryType: "npm",
          identifier: "args-mcp",
          version: "0.1.0",
          packageArguments: [
            { type: "named" as const, name: "--read-only" },
            { type: "named" as const, name: "--level", default: "info" },
            { type: "positional" as const, valueHint: "root_dir", isRequired: true },
            { type: "named" as const, name: "--optional", valueHint: "x" },
          ],
        },
      ],
    };
    const plan = planEntry(server, { hasProgram: on("npx") });
    expect(plan.inputs.map((input) => input.name)).toEqual(["root_dir"]);
    expect(plan.build((input) => (input.name === "root_dir" ? "/srv" : undefined)).args).toEqual([
      "-y",
      "args-mcp@0.1.0",
      "--read-only",
      "--level",
      "info",
      "/srv",
    ]);
  });

  it("fetches a package from the registry it was published on when that is not the public one", () => {
    const npm = (registryBaseUrl: string) =>
      planEntry(
        {
          name: "a/b",
          packages: [{ registryType: "npm", registryBaseUrl, identifier: "b", version: "1.0.0" }],
        },
        { hasProgram: on("npx") },
      ).build(() => undefined).args;
    expect(npm("https://registry.npmjs.org")).toEqual(["-y", "b@1.0.0"]);
    expect(npm("https://npm.corp.example")).toEqual(["-y", "--registry=https://npm.corp.example", "b@1.0.0"]);
    const pypi = planEntry(
      {
        name: "a/c",
        packages: [
          {
            registryType: "pypi",
            registryBaseUrl: "https://pypi.corp.example/simple",
            identifier: "c",
            version: "2",
          },
        ],
      },
      { hasProgram: on("uvx") },
    ).build(() => undefined).args;
    expect(pypi).toEqual(["--index-url", "https://pypi.corp.example/simple", "c==2"]);
  });

  it("says what to install for packages only, and that a local HTTP package is not run", () => {
    const local = {
      name: "x/y",
      packages: [{ registryType: "npm", identifier: "y", transport: { type: "streamable-http" } }],
    };
    expect(() => planEntry(local, { hasProgram: on("npx") })).toThrow(/only as a local HTTP server/);
    expect(() => planEntry({ name: "x/z" }, { hasProgram: on("npx") })).toThrow(/no package and no remote/);
  });
});
