import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { REDACTED, redactor } from "../../src/config/index.js";
import { attackSize, attackTimeout, reportFigure } from "../support/hostile.js";

// An upstream answers with a large error text full of encoded secrets: every one is hidden,
// and the redaction stays linear in the text (the figure says how fast).
describe("redacting a large error full of encoded secrets", () => {
  it("hides every secret at every base64 alignment", { timeout: attackTimeout(30_000, 600_000) }, () => {
    const secrets = Array.from({ length: attackSize(20, 200) }, () => randomBytes(12).toString("hex"));
    const hide = redactor(secrets);
    const chunks: string[] = [];
    const forms = ["base64", "base64url"] as const;
    for (let i = 0; i < attackSize(2_000, 200_000); i++) {
      const secret = secrets[i % secrets.length] as string;
      const prefix = randomBytes(i % 3).toString("latin1");
      const text = `${prefix}${secret}${randomBytes(4).toString("latin1")}`;
      chunks.push(Buffer.from(text, "latin1").toString(forms[i % 2] as (typeof forms)[number]));
      chunks.push(i % 5 === 0 ? JSON.stringify({ secret }) : encodeURIComponent(`k=${secret}`));
    }
    const text = chunks.join(" ");
    const started = performance.now();
    const shown = hide(text);
    const ms = performance.now() - started;
    expect(shown.split(REDACTED).length - 1).toBeGreaterThanOrEqual(chunks.length);
    for (const part of shown.split(" ").slice(0, 2_000))
      for (const secret of secrets.slice(0, 5)) expect(part).not.toContain(secret.slice(0, 8));
    reportFigure(
      "encoded secrets in a large error",
      `${(text.length / 2 ** 20).toFixed(1)} MiB, ${secrets.length} secrets: ${ms.toFixed(0)} ms (${(text.length / 2 ** 20 / (ms / 1000)).toFixed(1)} MiB/s)`,
    );
  });
});
