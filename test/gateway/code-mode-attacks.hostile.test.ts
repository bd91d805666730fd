import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CatalogView } from "../../src/catalog-modes/catalog-view.js";
import { viewEngines } from "../../src/catalog-modes/view-engines.js";
import { ATTACKS, LIMITS } from "../code-mode/attacks.js";
import { configOf, EVERYTHING, stdio } from "../support/config.js";
import { connectHttp, type InProcessGateway, resultText, startGateway } from "../support/gateway.js";
import { attackSize, attackTimeout, reportFigure } from "../support/hostile.js";

// The code-mode attacks again, sent as run_code calls by an MCP client to a running gateway:
// each gets a tool error naming what it met (or its harmless value), and the gateway goes on
// serving, its other clients' calls included.

const TOKENS = { timed: "timed-attacker-token-01", untimed: "untimed-attacker-token-1" };
let gw: InProcessGateway;

beforeAll(async () => {
  // get-env would show the host's environment: scripts never get it.
  const tools = { deny: ["everything__get-env"] };
  const config = configOf([stdio("everything", EVERYTHING, ["stdio"])], {
    profiles: { timed: { tools, mode: "code" }, untimed: { tools, mode: "code" } },
    tokens: [
      { token: TOKENS.timed, profile: "timed" },
      { token: TOKENS.untimed, profile: "untimed" },
    ],
  });
  // Attacks meant to meet the time limit get 250 ms; the others 10 s, so that they meet their own.
  const timed = new CatalogView({ mode: "code" }, viewEngines({ codeLimits: LIMITS }));
  const untimed = new CatalogView(
    { mode: "code" },
    viewEngines({ codeLimits: { ...LIMITS, wallMs: 10_000 } }),
  );
  gw = await startGateway(config, {}, { views: (caller) => (caller.profile === "timed" ? timed : untimed) });
}, 60_000);

afterAll(async () => {
  await gw?.stop();
});

const connect = (token: string) => connectHttp(gw.url, { token, name: "attacker" });

/** What a run_code answer says: the error code it names, or the value on its last line. */
function outcome(result: { isError?: boolean; content?: unknown }): unknown {
  const text = resultText(result);
  if (result.isError === true) return /^([A-Z_]+):/.exec(text)?.[1] ?? text;
  return { value: JSON.parse(text.split("\n").at(-1)!) };
}

describe("hostile run_code calls through the gateway", () => {
  it("each attack gets a clear tool error or its harmless value, and the gateway keeps serving", {
    timeout: attackTimeout(180_000, 1_200_000),
  }, async () => {
    const timed = await connect(TOKENS.timed);
    const untimed = await connect(TOKENS.untimed);
    const bystander = await connect(TOKENS.untimed);
    try {
      const runs = attackSize(ATTACKS.length, 1_000);
      const rssBefore = process.memoryUsage().rss;
      for (let i = 0; i < runs; i++) {
        const [name, code, expected] = ATTACKS[i % ATTACKS.length]!;
        const client = expected === "CODE_TIMEOUT" ? timed : untimed;
        const result = await client.callTool({ name: "run_code", arguments: { code } });
        expect([name, outcome(result)]).toEqual([name, expected]);
      }
      // Nothing of the attacks is left for the next script, and plain calls still work.
      const clean = await untimed.callTool({
        name: "run_code",
        arguments: { code: "[typeof leftover, typeof escaped, ({}).then, JSON.parse('[1]')[0]]" },
      });
      expect(outcome(clean)).toEqual({ value: ["undefined", "undefined", null, 1] });
      const sum = await bystander.callTool({ name: "everything__get-sum", arguments: { a: 20, b: 22 } });
      expect(resultText(sum)).toContain("42");
      expect((await fetch(gw.url.replace(/\/mcp$/, "/healthz"))).status).toBe(200);
      reportFigure(
        "run_code attacks through the gateway",
        `${runs} attacks: RSS ${(rssBefore / 2 ** 20).toFixed(0)} -> ${(process.memoryUsage().rss / 2 ** 20).toFixed(0)} MiB, gateway serving`,
      );
    } finally {
      await Promise.all([timed.close(), untimed.close(), bystander.close()]);
    }
  });
});
