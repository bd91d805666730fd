import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";

// The interceptors that ship with mcplex sit below the gateway that uses them: the gateway (and
// serve, the CLI) import src/interceptors/, never the other way. What one needs of the gateway
// is passed in as an interface (the client input's `CallParking`) or lives lower (hub/).

const DIR = "src/interceptors";

describe("src/interceptors/", () => {
  it.each(readdirSync(DIR).filter((name) => name.endsWith(".ts")))(
    "%s imports nothing of the gateway or the fronts",
    (name) => {
      const text = readFileSync(join(DIR, name), "utf8");
      const specifiers = [...text.matchAll(/(?:from|import)\s*\(?\s*"([^"]+)"/g)].map((m) => m[1]!);
      expect(specifiers.filter((s) => /^\.\.\/(gateway|fronts|serve|cli|dashboard)\//.test(s))).toEqual([]);
    },
  );
});
