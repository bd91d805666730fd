import { execFileSync } from "node:child_process";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { SecretStore } from "../../src/config/index.js";
import { SecretStoreError } from "../../src/errors.js";
import { runCli } from "../support/cli.js";
import { attackSize, reportFigure } from "../support/hostile.js";

// A store file someone else controls: a FIFO that never delivers, a header that asks the key
// derivation for minutes of work and gigabytes of memory.
let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "mcplex-store-attack-"));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const PASSPHRASE = "correct horse battery staple";

describe.skipIf(process.platform === "win32")("a FIFO at the secret store's path", () => {
  it("is refused with a clear error instead of hanging", { timeout: 60_000 }, async () => {
    execFileSync("mkfifo", [join(dir, "secrets.enc")]);
    const env = { MCPLEX_HOME: dir, MCPLEX_SECRET_KEY: "d".repeat(64) };
    // Killed by runCli's timer if it hangs: then `code` is null and the test fails.
    for (const args of [
      ["secrets", "list"],
      ["secrets", "set", "X"],
    ]) {
      const run = await runCli(args, { env, input: "value\n", timeout: 30_000 });
      expect(run.code).toBe(2);
      expect(run.stderr).toContain("is not a regular file");
      expect(run.stderr).toContain(join(dir, "secrets.enc"));
    }
  });
});

describe("a tampered store header", () => {
  async function tampered(kdf: Record<string, unknown>): Promise<SecretStoreError> {
    const file = join(dir, `${Math.random().toString(36).slice(2)}.enc`);
    const store = new SecretStore({ file, env: { MCPLEX_SECRET_KEY: PASSPHRASE } });
    await store.set("github", "ghp_tamperedHeader1");
    const envelope = JSON.parse(await readFile(file, "utf8")) as { kdf: Record<string, unknown> };
    envelope.kdf = { ...envelope.kdf, ...kdf };
    await writeFile(file, JSON.stringify(envelope));
    const error = await new SecretStore({ file, env: { MCPLEX_SECRET_KEY: PASSPHRASE } }).list().then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(SecretStoreError);
    return error as SecretStoreError;
  }

  it("is refused before deriving when it asks for scrypt beyond the documented parameters", async () => {
    const attacks = [
      { N: 2 ** 17 },
      { p: 16 },
      { r: 32 },
      { N: 2 ** 20, r: 32, p: 16 },
      { N: 2 ** 40 },
      { N: 1000 },
      { N: "32768" },
      { salt: "A".repeat(attackSize(1_000, 10_000_000)) },
    ];
    for (const kdf of attacks) {
      const error = await tampered(kdf);
      expect(error.code).toBe("SECRET_STORE_INVALID");
      expect(error.message).toMatch(/scrypt/);
      expect(error.message).toContain("N=32768, r=8, p=1");
      expect(error.hint).toMatch(/backup|move it away/);
    }
    reportFigure("tampered scrypt headers", `${attacks.length} refused before deriving`);
  });
});
