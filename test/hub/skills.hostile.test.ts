import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { McplexError } from "../../src/errors.js";
import type { LoadedSkill } from "../../src/ext/skills/skill-reader.js";
import { Hub } from "../../src/hub/hub.js";
import { configOf, stdio } from "../support/config.js";
import { attackSize, attackTimeout, reportFigure } from "../support/hostile.js";

/**
 * A hub reading skills from servers that misbehave: one that hands out cursors forever, one
 * that lists a skill past the limits every host must take, and a model (or a skill's own text)
 * asking for files a loaded skill does not list, on its own server or another's. Every request
 * the hub sends a server is counted: refusals must cost no read.
 */
const SERVER = "test/fixtures/servers/skills-server.mjs";
let hub: Hub;
const sent: Array<{ server: string; method: string; uri?: unknown }> = [];

beforeAll(async () => {
  hub = new Hub({
    config: configOf([
      stdio("alpha", process.execPath, [SERVER, "--origin", "alpha", "--oversized"]),
      stdio("beta", process.execPath, [SERVER, "--origin", "beta"]),
      stdio("endless", process.execPath, [SERVER, "--origin", "endless", "--endless"]),
    ]),
    upstreamInterceptors: [
      (next) => (request) => {
        sent.push({ server: request.target?.server ?? "", method: request.method, uri: request.params.uri });
        return next(request);
      },
    ],
  });
  await hub.start();
});
afterAll(() => hub?.close());

const reads = () => sent.filter((s) => s.method === "resources/read");
const refusal = async (work: Promise<unknown>): Promise<string> => {
  try {
    await work;
  } catch (error) {
    if (error instanceof McplexError && error.code === "SKILL_VERIFICATION_FAILED") return error.message;
    throw error;
  }
  throw new Error("not refused");
};

describe("skills from servers that misbehave", () => {
  it(
    "a server handing out cursors forever gets a bounded listing, and the others' skills are there",
    async () => {
      sent.length = 0;
      const started = performance.now();
      const skills = await hub.skills();
      const pages = sent.filter((s) => s.method === "skills/list" && s.server === "endless").length;
      reportFigure("endless skill cursors", `${pages} pages, ${(performance.now() - started).toFixed(0)} ms`);
      expect(pages).toBeLessThanOrEqual(1000);
      expect(skills.filter((s) => s.server === "beta").map((s) => s.name)).toEqual([
        "pdf-processing",
        "git-workflow",
        "refunds",
      ]);
      expect(reads()).toEqual([]);
    },
    attackTimeout(60_000, 120_000),
  );

  it("a skill past the limits is refused before any of its files is read", async () => {
    sent.length = 0;
    const huge = await hub.getSkill("skill://alpha/huge/SKILL.md");
    expect(await refusal(hub.loadSkill(huge))).toContain("exceed the limits of a skill");
    expect(reads()).toEqual([]);
  });

  it(
    "a loaded skill reads no file its entry does not list, on its server or another",
    async () => {
      const [skill] = (await hub.skills()).filter((s) => s.server === "alpha" && s.name === "pdf-processing");
      const loaded: LoadedSkill = await hub.loadSkill(skill!);
      sent.length = 0;
      const paths = [
        "../git-workflow/SKILL.md",
        "references/../../git-workflow/SKILL.md",
        "%2e%2e/git-workflow/SKILL.md",
        "references/FORMS.md/",
        "./references/FORMS.md ",
        "/etc/passwd",
        "skill://beta/pdf-processing/references/FORMS.md",
        "skill://alpha/git-workflow/SKILL.md",
        "skill://pdf-processing/references/FORMS.md",
        "mcplex://beta/skill%3A%2F%2Fpdf-processing%2FSKILL.md",
        "file:///etc/passwd",
      ];
      const rounds = attackSize(5, 200);
      for (let round = 0; round < rounds; round++) {
        for (const path of paths)
          expect(await refusal(hub.readSkillFile(loaded, path))).toContain("not a file its entry lists");
      }
      reportFigure("unlisted skill files", `${rounds * paths.length} reads refused, ${reads().length} sent`);
      expect(reads()).toEqual([]);
      const forms = new TextDecoder().decode(await hub.readSkillFile(loaded, "references/FORMS.md"));
      expect(forms).toBe("How alpha fills forms.\n");
    },
    attackTimeout(30_000, 120_000),
  );
});
