import { describe, expect, it } from "vitest";
import { Upstream, type UpstreamEvent } from "../../src/upstream/upstream.js";
import { fixture } from "../support/config.js";

describe("Upstream re-listing", () => {
  it("reports list changes only when a list really changed", async () => {
    const events: UpstreamEvent[] = [];
    const upstream = new Upstream(fixture("fx"), {
      clientInfo: { name: "test", version: "1" },
      onEvent: (event) => events.push(event),
    });
    try {
      await upstream.start();
      const changes = () => events.filter((e) => e.type === "list-changed");
      expect(changes().length).toBe(1); // the first listing
      await upstream.refresh();
      expect(changes().length).toBe(1); // same lists: nothing to tell anyone

      await upstream.request("tools/call", { name: "add_tool", arguments: {} });
      await upstream.refresh(["tools"]);
      const last = changes().at(-1);
      expect(last).toEqual({ type: "list-changed", kinds: ["tools"] });
      expect(upstream.tools.map((t) => t.name)).toContain("extra_1");
    } finally {
      await upstream.close();
    }
  });
});
