import { describe, expect, it } from "vitest";
import {
  CONFORMANCE_PAGE,
  conformancePage,
  parseRunnerList,
  runnerList,
  runnerVersion,
} from "../../scripts/conformance-table.js";
import { readDoc } from "./markdown-files.js";

describe("the conformance table (docs/reference/conformance.md)", () => {
  const list = runnerList();
  const page = readDoc(CONFORMANCE_PAGE);

  it("is what the runner's list generates (npm run docs:reference writes it)", () => {
    expect(page).toBe(conformancePage(list, runnerVersion()));
  });

  it("has one row for every scenario the runner lists, and no other", () => {
    const rows = [...page.matchAll(/^\| `([^`]+)` \|/gm)].map((m) => m[1]);
    const scenarios = [...list.server, ...list.client, ...list.authorization].map((s) => s.name);
    expect(rows).toEqual(scenarios);
    expect(list.server.length).toBeGreaterThan(60);
    expect(list.client.length).toBeGreaterThan(40);
    expect(page).toContain(runnerVersion());
  });

  it("parses the runner's list format", () => {
    const parsed = parseRunnerList(
      "Server scenarios (test against a server):\n  - ping [2025-06-18,2025-11-25]\n\nClient scenarios (test against a client):\n  - auth/dpop [extension]\n",
    );
    expect(parsed).toEqual({
      server: [{ name: "ping", versions: ["2025-06-18", "2025-11-25"] }],
      client: [{ name: "auth/dpop", versions: ["extension"] }],
      authorization: [],
    });
  });
});
