// biome-ignore-all lint/suspicious/noTemplateCurlyInString: config texts under test hold ${...} references

import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { chmod, mkdtemp, readdir, readFile, rm, stat, utimes, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { defaultSecretStorePath, loadConfig, SecretStore } from "../../src/config/index.js";
import { McplexError, SecretStoreError } from "../../src/errors.js";
import { withFileLock } from "../../src/storage/file-lock.js";

const TSX = resolve("node_modules/.bin/tsx");

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "mcplex-secrets-"));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const storeIn = (sub = "home", env: Record<string, string> = {}) =>
  new SecretStore({ file: join(dir, sub, "secrets.enc"), env });

async function failure(promise: Promise<unknown>): Promise<SecretStoreError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(SecretStoreError);
  return error as SecretStoreError;
}

describe("secret store", () => {
  it("round-trips secrets and creates a 0600 key file in a 0700 directory", async () => {
    const store = storeIn();
    expect(await store.get("github")).toBeUndefined();
    expect(await store.list()).toEqual([]);
    await store.set("github", "ghp_roundTrip123");
    await store.set("anthropic.key", "sk-ant-øæå ✓");
    expect(await store.get("github")).toBe("ghp_roundTrip123");
    expect(await store.get("anthropic.key")).toBe("sk-ant-øæå ✓");
    expect(await store.list()).toEqual(["anthropic.key", "github"]);
    expect((await stat(store.keyFile)).mode & 0o777).toBe(0o600);
    expect((await stat(store.file)).mode & 0o777).toBe(0o600);
    expect((await stat(join(dir, "home"))).mode & 0o777).toBe(0o700);
    // A second instance (another process) reads the same store with the same key file.
    expect(await storeIn().get("github")).toBe("ghp_roundTrip123");
  });

  it("keeps values out of the file and changes the IV on every write", async () => {
    const store = storeIn();
    await store.set("token", "plain-text-must-not-appear");
    const first = JSON.parse(await readFile(store.file, "utf8"));
    expect(JSON.stringify(first)).not.toContain("plain-text-must-not-appear");
    expect(first).toMatchObject({ format: "mcplex-secrets", version: 1, kdf: { name: "none" } });
    await store.set("token", "plain-text-must-not-appear");
    const second = JSON.parse(await readFile(store.file, "utf8"));
    expect(second.iv).not.toBe(first.iv);
    expect(second.data).not.toBe(first.data);
  });

  it("removes secrets", async () => {
    const store = storeIn();
    await store.set("a", "value-a");
    await store.set("b", "value-b");
    expect(await store.remove("a")).toBe(true);
    expect(await store.remove("a")).toBe(false);
    expect(await store.list()).toEqual(["b"]);
    expect(await storeIn("elsewhere").remove("a")).toBe(false);
  });

  it("applies concurrent sets of one instance without losing any", async () => {
    const store = storeIn();
    await Promise.all(Array.from({ length: 8 }, (_, i) => store.set(`k${i}`, `value-${i}`)));
    expect(await store.list()).toHaveLength(8);
  });

  it("leaves no temporary files behind after writes", async () => {
    const store = storeIn();
    for (let i = 0; i < 5; i++) await store.set(`s${i}`, `value-${i}`);
    await store.remove("s0");
    expect((await readdir(join(dir, "home"))).sort()).toEqual(["secret.key", "secrets.enc"]);
  });

  it("uses MCPLEX_SECRET_KEY as hex, as base64, or as a passphrase, without a key file", async () => {
    const key = randomBytes(32);
    for (const [sub, value] of [
      ["hex", key.toString("hex")],
      ["b64", key.toString("base64")],
      ["pass", "correct horse battery staple"],
    ] as const) {
      const store = storeIn(sub, { MCPLEX_SECRET_KEY: value });
      await store.set("x", `secret-${sub}`);
      expect(await storeIn(sub, { MCPLEX_SECRET_KEY: value }).get("x")).toBe(`secret-${sub}`);
      expect(await readdir(join(dir, sub))).toEqual(["secrets.enc"]);
    }
    const envelope = JSON.parse(await readFile(join(dir, "pass", "secrets.enc"), "utf8"));
    expect(envelope.kdf).toMatchObject({ name: "scrypt", N: 32768 });
  });

  it("refuses a short passphrase", async () => {
    const error = await failure(storeIn("s", { MCPLEX_SECRET_KEY: "hunter2" }).set("x", "y"));
    expect(error.code).toBe("SECRET_KEY_INVALID");
    expect(error.hint).toMatch(/at least 12 characters/);
  });

  it("rejects a wrong key with SECRET_KEY_INVALID, never garbage", async () => {
    await storeIn("k", { MCPLEX_SECRET_KEY: randomBytes(32).toString("hex") }).set("x", "value");
    const wrong = storeIn("k", { MCPLEX_SECRET_KEY: randomBytes(32).toString("hex") });
    const error = await failure(wrong.get("x"));
    expect(error.code).toBe("SECRET_KEY_INVALID");
    expect(error.message).toMatch(/does not open secret store/);
    const passphrase = storeIn("p", { MCPLEX_SECRET_KEY: "the right passphrase" });
    await passphrase.set("x", "value");
    const wrongPass = await failure(storeIn("p", { MCPLEX_SECRET_KEY: "the wrong passphrase" }).list());
    expect(wrongPass.code).toBe("SECRET_KEY_INVALID");
  });

  it("says when the store exists but its key is gone", async () => {
    const store = storeIn();
    await store.set("x", "value");
    await rm(store.keyFile);
    const error = await failure(store.get("x"));
    expect(error.code).toBe("SECRET_KEY_INVALID");
    expect(error.hint).toContain("MCPLEX_SECRET_KEY");
  });

  it("detects a flipped byte in the ciphertext as SECRET_STORE_INVALID", async () => {
    const store = storeIn();
    await store.set("x", "a value long enough to flip");
    const envelope = JSON.parse(await readFile(store.file, "utf8"));
    const data = Buffer.from(envelope.data, "base64");
    data[3] = data[3]! ^ 0x01;
    envelope.data = data.toString("base64");
    await writeFile(store.file, JSON.stringify(envelope));
    const error = await failure(store.get("x"));
    expect(error.code).toBe("SECRET_STORE_INVALID");
    expect(error.message).toMatch(/modified or is damaged/);
  });

  it("detects an edited header as SECRET_STORE_INVALID", async () => {
    const store = storeIn("h", { MCPLEX_SECRET_KEY: "a passphrase for the header test" });
    await store.set("x", "value");
    const envelope = JSON.parse(await readFile(store.file, "utf8"));
    envelope.kdf.extra = 1;
    await writeFile(store.file, JSON.stringify(envelope));
    expect((await failure(store.get("x"))).code).toBe("SECRET_STORE_INVALID");
  });

  it("detects a truncated store as SECRET_STORE_INVALID", async () => {
    const store = storeIn();
    await store.set("x", "value");
    const text = await readFile(store.file, "utf8");
    await writeFile(store.file, text.slice(0, Math.floor(text.length / 2)));
    const error = await failure(store.list());
    expect(error.code).toBe("SECRET_STORE_INVALID");
    expect(error.message).toMatch(/truncated/);
    await writeFile(store.file, "");
    expect((await failure(store.list())).code).toBe("SECRET_STORE_INVALID");
  });

  it("refuses a key file readable by group or others, with the chmod fix", async () => {
    const store = storeIn();
    await store.set("x", "value");
    await chmod(store.keyFile, 0o644);
    const error = await failure(store.get("x"));
    expect(error.code).toBe("SECRET_KEY_INVALID");
    expect(error.message).toMatch(/mode 644/);
    expect(error.hint).toBe(`run: chmod 600 ${store.keyFile}`);
    await chmod(store.keyFile, 0o600);
    expect(await store.get("x")).toBe("value");
  });

  it("rejects names that could not be referenced", async () => {
    const store = storeIn();
    for (const bad of ["", "has space", "a:b", "1abc", "x}", "a".repeat(129)]) {
      expect((await failure(store.set(bad, "v"))).code).toBe("INVALID_ARGUMENT");
    }
  });

  it("defaults to $MCPLEX_HOME, then XDG_CONFIG_HOME, then ~/.config/mcplex", () => {
    expect(defaultSecretStorePath({ MCPLEX_HOME: "/m" })).toBe("/m/secrets.enc");
    expect(defaultSecretStorePath({ XDG_CONFIG_HOME: "/x" })).toBe("/x/mcplex/secrets.enc");
    expect(defaultSecretStorePath({})).toMatch(/\.config\/mcplex\/secrets\.enc$/);
  });

  it("feeds ${secret:NAME} in a config file through loadConfig", async () => {
    const env = { MCPLEX_HOME: join(dir, "home") };
    await new SecretStore({ env }).set("github", "ghp_fromTheStore42");
    await writeFile(
      join(dir, "mcplex.yaml"),
      "servers:\n  gh:\n    command: x\n    env:\n      T: ${secret:github}\n",
    );
    const config = await loadConfig({ cwd: dir, env });
    expect(config.servers[0]).toMatchObject({ env: { T: "ghp_fromTheStore42" } });
    expect(config.secrets).toContain("ghp_fromTheStore42");
  });

  it("keeps every change when several processes write at once", { timeout: 60_000 }, async () => {
    // Six processes, each setting five secrets of its own in turn, all against one store.
    const home = join(dir, "shared");
    const env = { ...process.env, MCPLEX_HOME: home, MCPLEX_SECRET_KEY: "d".repeat(64) };
    const script = join(dir, "writer.mts");
    await writeFile(
      script,
      `import { SecretStore } from ${JSON.stringify(resolve("src/config/secret-store.ts"))};
       const store = new SecretStore();
       for (let i = 0; i < 5; i++) await store.set(\`p\${process.argv[2]}_\${i}\`, "v");\n`,
    );
    const runs = Array.from(
      { length: 6 },
      (_, n) =>
        new Promise<number | null>((done) => {
          const child = spawn(TSX, [script, String(n)], { env, stdio: "inherit" });
          child.on("close", done);
        }),
    );
    expect(await Promise.all(runs)).toEqual([0, 0, 0, 0, 0, 0]);
    const names = await new SecretStore({
      env: { MCPLEX_HOME: home, MCPLEX_SECRET_KEY: "d".repeat(64) },
    }).list();
    expect(names).toHaveLength(30);
    expect(await readdir(home)).not.toContain("secrets.enc.lock");
  });

  it("breaks a lock left by a process that died, and waits for a live one", async () => {
    const store = storeIn("locked", { MCPLEX_SECRET_KEY: "e".repeat(64) });
    await store.set("first", "1");
    const lock = `${store.file}.lock`;
    await writeFile(lock, "99999\n");
    const old = new Date(Date.now() - 60_000);
    await utimes(lock, old, old);
    await store.set("second", "2");
    expect(await store.list()).toEqual(["first", "second"]);

    await writeFile(lock, "1\n"); // fresh: held by someone alive
    const held = (await withFileLock(lock, async () => undefined, { waitMs: 50 }).catch(
      (e: unknown) => e,
    )) as McplexError;
    expect(held).toBeInstanceOf(McplexError);
    expect(held.code).toBe("FILE_LOCKED");
    expect(held.message).toBe(`${lock} is held by another mcplex process`);
    expect(held.hint).toBe(`if no other mcplex is running, delete ${lock}`);
  });
});
