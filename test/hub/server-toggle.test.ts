import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Hub } from "../../src/hub/hub.js";
import { configOf, fixture } from "../support/config.js";

// Restarting, disabling and enabling servers at run time (the dashboard's server actions), on
// real fixture processes, including two servers that share one connection.

describe("turning servers on and off at run time", { timeout: 60_000 }, () => {
  let hub: Hub;
  const status = (name: string) => hub.servers().find((s) => s.name === name)!;
  const echo = (server: string) => hub.callTool(`${server}__echo`, { message: "hi" });

  beforeAll(async () => {
    // a and b are the same definition: one process serves both.
    hub = new Hub({ config: configOf([fixture("a"), fixture("b"), fixture("solo", ["--modern-only"])]) });
    await hub.start();
  });
  afterAll(() => hub?.close());

  it("disables a server sharing its connection without stopping the other's", async () => {
    const pid = status("a").pid;
    expect(status("b").pid).toBe(pid);
    await hub.setServerEnabled("a", false);
    expect(status("a")).toMatchObject({ enabled: false, state: "disabled" });
    expect(status("b")).toMatchObject({ enabled: true, state: "ready", pid });
    await expect(echo("a")).rejects.toThrow('server "a" is disabled');
    expect(
      hub
        .tools()
        .filter((t) => t.server === "a")
        .every((t) => !t.available),
    ).toBe(true);
    expect((await echo("b")).content).toEqual([{ type: "text", text: "echo: hi" }]);

    await hub.setServerEnabled("a", true);
    expect(status("a")).toMatchObject({ enabled: true, state: "ready", pid });
    expect(hub.tools().find((t) => t.name === "a__echo")?.available).toBe(true);
    expect((await echo("a")).content).toEqual([{ type: "text", text: "echo: hi" }]);
  });

  it("stops a server whose connection nobody else uses, and starts it again on enable", async () => {
    const pid = status("solo").pid;
    const events: string[] = [];
    const off = hub.on((e) => {
      if (e.type === "server-state" && e.server === "solo") events.push(e.state);
    });
    await hub.setServerEnabled("solo", false);
    expect(events).toEqual(["stopped"]);
    await hub.setServerEnabled("solo", true);
    off();
    expect(events).toEqual(["stopped", "starting", "ready"]);
    expect(status("solo").pid).not.toBe(pid);
    // Asking again for what already holds changes nothing.
    await hub.setServerEnabled("solo", true);
    expect(status("solo").state).toBe("ready");
  });

  it("restarts a server in a new process, and refuses to restart a disabled one", async () => {
    const pid = status("solo").pid;
    await hub.restartServer("solo");
    expect(status("solo")).toMatchObject({ state: "ready" });
    expect(status("solo").pid).not.toBe(pid);
    await hub.setServerEnabled("solo", false);
    await expect(hub.restartServer("solo")).rejects.toThrow('server "solo" is disabled');
    await expect(hub.restartServer("nope")).rejects.toThrow('unknown server "nope"');
    await expect(hub.setServerEnabled("nope", true)).rejects.toThrow('unknown server "nope"');
  });
});
