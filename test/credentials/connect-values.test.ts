/**
 * The values form refuses, where the user types it, a value the server's launch would refuse:
 * one that would start an argument the config placed as a whole with "-" (issue 32, point 12).
 * That the launch refuses it too is in per-user-values.hostile.test.ts.
 */
import { describe, expect, it } from "vitest";
import { ConnectFlow } from "../../src/credentials/connect-flow.js";
import { ConnectLinks } from "../../src/credentials/connect-links.js";
import { ConnectSignal } from "../../src/credentials/connect-signal.js";
import { memoryCredentialVault } from "../../src/credentials/memory-vault.js";
import type { UserRef } from "../../src/credentials/user-credentials.js";
import { userKey } from "../../src/credentials/user-ref.js";
import { stdio } from "../support/config.js";

const user: UserRef = {
  key: userKey("https://idp.example", "alice"),
  subject: "alice",
  issuer: "https://idp.example",
};
const tenant = stdio("tenant", "node", ["server.mjs", "${user:MODE}", "--region=${user:REGION}"], {
  credentials: "per-user",
});

function form() {
  const vault = memoryCredentialVault();
  const links = new ConnectLinks({ base: "http://127.0.0.1:8420" });
  const flow = new ConnectFlow({ vault, links, signal: new ConnectSignal() });
  const ticket = links.check(new URL(links.connectUrl(user, "tenant")).searchParams.get("ticket"), "tenant");
  const save = (values: Record<string, string>) =>
    flow.saveValues(flow.valuesGrant(ticket, "browser"), "browser", tenant, new URLSearchParams(values));
  return { vault, save };
}

describe("the values form of a per-user stdio server", () => {
  it("refuses a value that would become an option of the server's, naming the field, and stores nothing", async () => {
    const { vault, save } = form();
    await expect(save({ MODE: "--inject-flag=1", REGION: "eu" })).rejects.toThrow(
      /tenant: \$\{user:MODE\} may not start with "-"/,
    );
    expect(await vault.get(user.key, "tenant")).toBeUndefined();
  });

  it("takes a value starting with - where the config's own text comes first, and a plain one", async () => {
    const { vault, save } = form();
    await save({ MODE: "read-only", REGION: "-eu" });
    expect((await vault.get(user.key, "tenant"))?.values).toEqual({ MODE: "read-only", REGION: "-eu" });
  });
});
