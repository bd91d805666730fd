import { describe, expect, it } from "vitest";
import { referencePages } from "../../scripts/reference.js";
import { readDoc } from "./markdown-files.js";

describe("generated reference pages", () => {
  for (const page of referencePages()) {
    it(`${page.path} is what the code generates (npm run docs:reference writes it)`, () => {
      expect(readDoc(page.path)).toBe(page.text);
    });
  }
});
