import { describe, expect, it } from "vitest";
import { parseConfig } from "../../src/config/parse-config.js";
import { usesPins } from "../../src/pins/open-pins.js";
import { issuesOf } from "../support/config-errors.js";

const parse = (text: string) => parseConfig(text, { source: "mcplex.yaml", env: {} });

describe("pin: in the config", () => {
  it("applies the top-level default to servers that name none, and a server's own wins", () => {
    const config = parse(
      "pin: hold-tools\nservers:\n  a: { command: x }\n  b: { command: x, pin: warn }\n  c: { command: x, pin: off }\n" +
        "available:\n  d: { command: x }\n",
    );
    expect(config.pin).toBe("hold-tools");
    expect(config.servers.map((s) => [s.name, s.pin])).toEqual([
      ["a", "hold-tools"],
      ["b", "warn"],
      ["c", "off"],
    ]);
    expect(config.available?.[0]?.pin).toBe("hold-tools");
    expect(usesPins(config)).toBe(true);
  });

  it("pins nothing unless asked", () => {
    const config = parse("servers:\n  a: { command: x }\n  b: { command: x, pin: off }\n");
    expect(config.servers.map((s) => s.pin)).toEqual([undefined, "off"]);
    expect(usesPins(config)).toBe(false);
  });

  it("refuses an unknown policy at its path, listing the valid ones", () => {
    expect(issuesOf("pin: hold\nservers:\n  a: { command: x, pin: warm }\n")).toMatchObject([
      {
        path: "servers.a.pin",
        message: '"warm" is not valid; use one of: hold-tools, hold-server, warn, off',
      },
      { path: "pin", message: '"hold" is not valid; use one of: hold-tools, hold-server, warn, off' },
    ]);
  });
});
