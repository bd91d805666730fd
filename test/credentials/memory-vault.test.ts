import { describe, expect, it } from "vitest";
import { memoryCredentialVault } from "../../src/credentials/memory-vault.js";
import { userKey, userRefOf } from "../../src/credentials/user-ref.js";
import type { Identity } from "../../src/hub/call-pipeline.js";

describe("memoryCredentialVault", () => {
  it("keeps records per (user, server), lists and deletes them", async () => {
    const vault = memoryCredentialVault();
    await vault.put("u1", "a", { values: { K: "1" }, connectedAt: 1 });
    await vault.put("u1", "b", { values: { K: "2" }, connectedAt: 2 });
    await vault.put("u2", "a", { values: { K: "3" }, connectedAt: 3 });
    expect((await vault.get("u1", "a"))?.values).toEqual({ K: "1" });
    expect((await vault.get("u2", "a"))?.values).toEqual({ K: "3" });
    expect(await vault.servers("u1")).toEqual(["a", "b"]);
    expect((await vault.users()).sort()).toEqual(["u1", "u2"]);
    expect(await vault.delete("u1", "a")).toEqual(["a"]);
    expect(await vault.delete("u1", "zzz")).toEqual([]);
    expect(await vault.delete("u2")).toEqual(["a"]);
    expect(await vault.users()).toEqual(["u1"]);
  });

  it("runs one exclusive run at a time per (user, server), in order, whatever each run does", async () => {
    const vault = memoryCredentialVault();
    const log: string[] = [];
    let release!: () => void;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    const first = vault.exclusive("u", "s", async () => {
      log.push("first:start");
      await gate;
      log.push("first:end");
      throw new Error("refused");
    });
    const second = vault.exclusive("u", "s", async () => {
      log.push("second");
      return 2;
    });
    // Another key does not wait.
    expect(await vault.exclusive("u", "other", async () => "free")).toBe("free");
    expect(log).toEqual(["first:start"]);
    release();
    await expect(first).rejects.toThrow("refused");
    expect(await second).toBe(2);
    expect(log).toEqual(["first:start", "first:end", "second"]);
  });
});

describe("userRefOf", () => {
  const identity = (over: Partial<Identity>): Identity => ({
    key: "user:0:alice",
    via: "oauth",
    subject: "alice",
    issuer: "https://idp.example",
    operator: false,
    ...over,
  });

  it("keys a signed-in user by a digest of issuer and subject, one per issuer", () => {
    const ref = userRefOf(identity({}));
    expect(ref?.key).toBe(userKey("https://idp.example", "alice"));
    expect(ref?.key).toMatch(/^[0-9a-f]{64}$/);
    expect(userRefOf(identity({ issuer: "https://other.example" }))?.key).not.toBe(ref?.key);
  });

  it("is none for static tokens and anonymous callers", () => {
    expect(userRefOf(identity({ via: "token", subject: undefined }))).toBeUndefined();
    expect(userRefOf(identity({ via: "anonymous", subject: undefined }))).toBeUndefined();
    expect(userRefOf(undefined)).toBeUndefined();
  });

  it("reads the access token through a function, so no JSON of it carries the token", () => {
    const ref = userRefOf(identity({ accessToken: () => "eyJ-the-raw-token" }));
    expect(ref?.subjectToken?.()).toBe("eyJ-the-raw-token");
    expect(JSON.stringify(ref)).not.toContain("eyJ-the-raw-token");
    expect(JSON.stringify(identity({ accessToken: () => "eyJ-the-raw-token" }))).not.toContain("eyJ");
  });
});
