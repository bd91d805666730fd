import { describe, expect, it } from "vitest";
import { diff } from "../../src/recording/answer-drift.js";

describe("the drift of an answer", () => {
  it("ignores _meta, and strings that are both times or both UUIDs, also inside JSON text", () => {
    const recorded = {
      result: {
        _meta: { progressToken: 3, "mcplex/simulated": true },
        structuredContent: {
          at: "2026-11-24T15:29:21.069Z",
          id: "6f1c2a9e-7b3d-4f60-9a1b-0c2d3e4f5a6b",
          n: 1,
        },
        content: [{ type: "text", text: '{"createdAt":"2026-11-24T15:29:21Z","n":1}' }],
      },
    };
    const live = {
      result: {
        _meta: { progressToken: 9 },
        structuredContent: {
          at: "2026-12-01T08:00:00.000Z",
          id: "0a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d",
          n: 1,
        },
        content: [{ type: "text", text: '{"createdAt":"2026-12-01T08:00:00Z","n":1}' }],
      },
    };
    expect(diff(recorded, live)).toEqual([]);
  });

  it("names each changed, added and removed value by its JSON pointer", () => {
    expect(
      diff(
        { result: { entities: [{ name: "Ada" }], count: 1, "a/b": true } },
        { result: { entities: [], count: 2, extra: "x", "a/b": true } },
      ),
    ).toEqual([
      { path: "/result/entities/0", recorded: { name: "Ada" }, live: undefined },
      { path: "/result/count", recorded: 1, live: 2 },
      { path: "/result/extra", recorded: undefined, live: "x" },
    ]);
    expect(
      diff({ result: "a time: 2026-11-24T15:29:21Z" }, { result: "a time: 2026-11-25T15:29:21Z" }),
    ).toHaveLength(1);
  });
});
