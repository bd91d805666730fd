import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { configOf, fixture } from "../support/config.js";
import {
  type InProcessGateway,
  postRev2026,
  resultText,
  rev2026Request,
  startGateway,
} from "../support/gateway.js";

// A 2026 requestState is bound to the client it was issued to (its token and profile): another
// token that gets hold of it cannot answer the parked call, and the rightful client still can.

const ALICE = "alice-token-of-the-binding-test";
const BOB = "bob-token-of-the-binding-test";
let gw: InProcessGateway;

beforeAll(async () => {
  gw = await startGateway(
    configOf([fixture("legacy", ["--legacy-only"])], { tokens: [{ token: ALICE }, { token: BOB }] }),
  );
});
afterAll(() => gw?.stop());

const caps = { elicitation: {} };
const as = (token: string) => ({ authorization: `Bearer ${token}` });

describe("a requestState", () => {
  it("is refused from another token, and accepted from the one it was issued to", async () => {
    const first = await postRev2026(
      gw.url,
      rev2026Request(1, "tools/call", { name: "legacy__ask_name" }, caps),
      as(ALICE),
    );
    const result = (first.json as { result: Record<string, unknown> }).result;
    expect(result.resultType).toBe("input_required");
    const [key] = Object.keys(result.inputRequests as object);
    const retry = (id: number) =>
      rev2026Request(
        id,
        "tools/call",
        {
          name: "legacy__ask_name",
          inputResponses: { [key!]: { action: "accept", content: { name: "Mallory" } } },
          requestState: result.requestState,
        },
        caps,
      );
    const stolen = await postRev2026(gw.url, retry(2), as(BOB));
    expect((stolen.json as { error: { message: string } }).error.message).toMatch(/issued to another client/);
    const rightful = await postRev2026(gw.url, retry(3), as(ALICE));
    expect(resultText((rightful.json as { result: unknown }).result)).toBe("hello Mallory");
  });
});
