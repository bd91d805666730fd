/**
 * The sandbox applies to per-user processes too: a `share: false` server behind the gateway
 * starts one sandboxed process per client session (SDK v2 clients over Streamable HTTP).
 */
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { afterEach, describe, expect, it } from "vitest";
import { SANDBOX_DEFAULTS } from "../../src/config/read-sandbox.js";
import { configOf, stdio } from "../support/config.js";
import { type InProcessGateway, resultText, startGateway } from "../support/gateway.js";

const PROBE = "test/fixtures/servers/sandbox-probe-server.mjs";
let gw: InProcessGateway | undefined;
afterEach(async () => {
  await gw?.stop();
  gw = undefined;
});

async function session(url: string): Promise<{ client: Client; end: () => Promise<void> }> {
  const client = new Client(
    { name: "per-session", version: "1.0.0" },
    { versionNegotiation: { mode: "legacy" } },
  );
  const transport = new StreamableHTTPClientTransport(new URL(url));
  await client.connect(transport);
  return {
    client,
    end: async () => {
      await transport.terminateSession();
      await client.close();
    },
  };
}

describe("a share: false server in a sandbox", () => {
  it("gives each client session its own sandboxed process", async () => {
    gw = await startGateway(
      configOf([stdio("probe", "node", [PROBE], { share: false, sandbox: SANDBOX_DEFAULTS } as never)]),
    );
    const a = await session(gw.url);
    const b = await session(gw.url);
    try {
      for (const { client } of [a, b]) {
        const read = await client.callTool({
          name: "probe__probe",
          arguments: { kind: "read", path: "/etc/shadow" },
        });
        expect(JSON.parse(resultText(read))).toMatchObject({ ok: false, code: "ENOENT" });
        const write = await client.callTool({
          name: "probe__probe",
          arguments: { kind: "write", path: "/usr/local/planted" },
        });
        expect(JSON.parse(resultText(write))).toMatchObject({ ok: false, code: "EROFS" });
      }
      expect(gw.hub.servers()[0]?.clientConnections).toBe(2);
    } finally {
      await a.end();
      await b.end();
    }
  });
});
