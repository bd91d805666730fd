import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RedisCredentialVault } from "../../src/cluster/redis-credential-vault.js";
import { RedisLink } from "../../src/cluster/redis-link.js";
import { deriveKey } from "../../src/cluster/signed-ids.js";
import { FileCredentialVault } from "../../src/credentials/file-credential-vault.js";
import type { CredentialVault, UserServerRecord } from "../../src/credentials/user-credentials.js";
import { type RedisProcess, startRedis } from "../support/redis.js";

// One contract for every CredentialVault: the file beside the secret store, and Redis.

const dir = mkdtempSync(join(tmpdir(), "mcplex-vault-"));
let redis: RedisProcess;
const links: RedisLink[] = [];
beforeAll(async () => {
  redis = await startRedis();
});
afterAll(async () => {
  for (const link of links) link.close();
  await redis?.stop();
  rmSync(dir, { recursive: true, force: true });
});

const TOKEN = "at-4f1c9e2b7d-secret-token";
const record = (n: number, token = TOKEN): UserServerRecord => ({
  oauth: { tokens: { access_token: `${token}-${n}`, token_type: "Bearer", refresh_token: `rt-${n}` } },
  connectedAt: 1_700_000_000_000 + n,
});

let made = 0;
/** A vault of each kind; `same` makes another holder of the same store (another process or replica). */
const kinds: Array<[string, () => Promise<{ make: () => CredentialVault; raw: () => Promise<string> }>]> = [
  [
    "file",
    async () => {
      const file = join(dir, `vault-${++made}`, "credentials.json");
      const env = { MCPLEX_HOME: join(dir, `vault-${made}`) };
      return {
        make: () => new FileCredentialVault({ file, env }),
        raw: async () => readFileSync(file, "utf8"),
      };
    },
  ],
  [
    "redis",
    async () => {
      const key = deriveKey(`vault-test-secret-${++made}-0123456789abcdef`, "credential-vault");
      execFileSync("redis-cli", ["-p", String(redis.port), "FLUSHALL"]);
      return {
        make: () => {
          const link = new RedisLink(redis.url, () => {});
          links.push(link);
          void link.connect();
          return new RedisCredentialVault(link, key);
        },
        raw: async () =>
          execFileSync("redis-cli", ["-p", String(redis.port), "--no-raw", "HGETALL", "mcplex:cred:user-a"], {
            encoding: "utf8",
          }),
      };
    },
  ],
];

describe.each(kinds)("%s credential vault", (_kind, setUp) => {
  it("stores, lists and deletes records per user and server", async () => {
    const { make } = await setUp();
    const vault = make();
    expect(await vault.get("user-a", "github")).toBeUndefined();
    await vault.put("user-a", "github", record(1));
    await vault.put("user-a", "notion", { values: { NOTION_KEY: "nk-1" }, connectedAt: 5 });
    await vault.put("user-b", "github", record(2));
    expect(await vault.get("user-a", "github")).toEqual(record(1));
    expect(await vault.get("user-a", "notion")).toEqual({ values: { NOTION_KEY: "nk-1" }, connectedAt: 5 });
    expect(await vault.get("user-b", "github")).toEqual(record(2));
    expect(await vault.get("user-b", "notion")).toBeUndefined();
    expect(await vault.servers("user-a")).toEqual(["github", "notion"]);
    expect(await vault.users()).toEqual(["user-a", "user-b"]);
    // Another holder reads what this one wrote.
    expect(await make().get("user-a", "github")).toEqual(record(1));

    expect(await vault.delete("user-a", "github")).toEqual(["github"]);
    expect(await vault.delete("user-a", "github")).toEqual([]);
    expect(await vault.get("user-a", "github")).toBeUndefined();
    expect(await vault.delete("user-b")).toEqual(["github"]);
    expect(await vault.users()).toEqual(["user-a"]);
    expect(await vault.delete("user-a")).toEqual(["notion"]);
    expect(await vault.users()).toEqual([]);
  });

  it("holds no token or value in clear at rest", async () => {
    const { make, raw } = await setUp();
    const vault = make();
    await vault.put("user-a", "github", { ...record(7), values: { API_KEY: "value-9d8e7f-secret" } });
    const stored = await raw();
    expect(stored.length).toBeGreaterThan(40);
    expect(stored).not.toContain("secret-token");
    expect(stored).not.toContain("rt-7");
    expect(stored).not.toContain("value-9d8e7f");
  });

  it("loses no write of concurrent writers", async () => {
    const { make } = await setUp();
    const holders = [make(), make(), make()];
    await Promise.all(
      Array.from({ length: 24 }, (_, i) => holders[i % 3]!.put(`user-${i % 4}`, `server-${i}`, record(i))),
    );
    const vault = make();
    expect(await vault.users()).toEqual(["user-0", "user-1", "user-2", "user-3"]);
    for (let i = 0; i < 24; i++) expect(await vault.get(`user-${i % 4}`, `server-${i}`)).toEqual(record(i));
  });

  it("runs one exclusive section at a time per (user, server), across holders", async () => {
    const { make } = await setUp();
    const holders = [make(), make(), make()];
    let inside = 0;
    let most = 0;
    const order: string[] = [];
    let release!: () => void;
    const firstEntered = new Promise<void>((resolve) => {
      release = resolve;
    });
    let gate!: () => void;
    const held = new Promise<void>((resolve) => {
      gate = resolve;
    });
    const section = (h: number) =>
      holders[h]!.exclusive("user-a", "github", async () => {
        inside++;
        most = Math.max(most, inside);
        order.push(`in ${h}`);
        if (h === 0) {
          release();
          await held;
        }
        inside--;
        order.push(`out ${h}`);
        return h;
      });
    const first = section(0);
    await firstEntered;
    const others = [section(1), section(2)];
    // Another (user, server) is not held up by this one.
    expect(await holders[1]!.exclusive("user-b", "github", async () => "free")).toBe("free");
    gate();
    expect(await Promise.all([first, ...others])).toEqual([0, 1, 2]);
    expect(most).toBe(1);
    expect(order.slice(0, 2)).toEqual(["in 0", "out 0"]);
  });
});

describe("file credential vault", () => {
  it("is written mode 0600 beside the secret store, and refuses a record moved to another user", async () => {
    const home = join(dir, "moved");
    const vault = new FileCredentialVault({ env: { MCPLEX_HOME: home } });
    expect(vault.file).toBe(join(home, "credentials.json"));
    await vault.put("user-a", "github", record(1));
    expect(statSync(vault.file).mode & 0o777).toBe(0o600);
    const file = JSON.parse(readFileSync(vault.file, "utf8"));
    file.records["user-b"] = { github: file.records["user-a"].github };
    const { writeFileSync } = await import("node:fs");
    writeFileSync(vault.file, JSON.stringify(file));
    await expect(vault.get("user-b", "github")).rejects.toMatchObject({ code: "SECRET_STORE_INVALID" });
    expect(await vault.get("user-a", "github")).toEqual(record(1));
  });

  it("refuses a file naming a key derivation it does not know, naming it and the fix", async () => {
    const home = join(dir, "unknown-kdf");
    const vault = new FileCredentialVault({ env: { MCPLEX_HOME: home } });
    await vault.put("user-a", "github", record(1));
    const { writeFileSync } = await import("node:fs");
    for (const kdf of [{ name: "argon2id" }, { name: "scrypt" }, { name: { toString: 1 } }]) {
      const file = JSON.parse(readFileSync(vault.file, "utf8"));
      writeFileSync(vault.file, JSON.stringify({ ...file, kdf }));
      const error = await new FileCredentialVault({ env: { MCPLEX_HOME: home } })
        .get("user-a", "github")
        .then(
          () => undefined,
          (e: unknown) => e,
        );
      expect(error, JSON.stringify(kdf)).toMatchObject({ code: "SECRET_STORE_INVALID" });
      expect((error as Error).message).toMatch(
        /unknown key derivation "argon2id"|without a salt|is missing fields/,
      );
      writeFileSync(vault.file, JSON.stringify(file));
    }
  });
});
