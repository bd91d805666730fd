/** Which server definitions share one connection: every setting that changes the launch counts. */
import { describe, expect, it } from "vitest";
import { SANDBOX_DEFAULTS } from "../../src/config/read-sandbox.js";
import type { ServerConfig } from "../../src/config/types.js";
import { connectionKey } from "../../src/servers/connection-key.js";
import { stdio } from "../support/config.js";

const server = (extra: Partial<ServerConfig> = {}) => stdio("s", "node", ["server.mjs"], extra);

describe("connectionKey", () => {
  it("is the same for the same launch, unsandboxed whether or not it says sandbox: false", () => {
    expect(connectionKey(server())).toBe(connectionKey(stdio("other", "node", ["server.mjs"])));
    expect(connectionKey(server({ sandbox: false } as never))).toBe(connectionKey(server()));
  });

  it("differs with the environment, the working folder, the sandbox and the folder it hides", () => {
    const boxed = server({ sandbox: SANDBOX_DEFAULTS } as never);
    const keys = [
      server(),
      server({ env: { A: "1" } } as never),
      server({ cwd: "/srv" } as never),
      boxed,
      server({ sandbox: { ...SANDBOX_DEFAULTS, network: "all" } } as never),
      server({ sandbox: SANDBOX_DEFAULTS, configDir: "/etc/mcplex" } as never),
      server({ credentials: "per-user" } as never),
    ].map(connectionKey);
    expect(new Set(keys).size).toBe(keys.length);
    expect(connectionKey(server({ sandbox: { ...SANDBOX_DEFAULTS } } as never))).toBe(connectionKey(boxed));
  });
});
