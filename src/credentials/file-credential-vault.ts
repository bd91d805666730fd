import { createHash, timingSafeEqual } from "node:crypto";
import type { Stats } from "node:fs";
import { mkdir, stat } from "node:fs/promises";
import { dirname, join } from "node:path";
import { defaultSecretStorePath } from "../config/secret-store.js";
import { SecretStoreError } from "../errors.js";
import { withFileLock } from "../storage/file-lock.js";
import { readRegularFile } from "../storage/read-regular-file.js";
import { openText, sealText } from "../storage/sealed-text.js";
import {
  createKeyFile,
  derivationProblem,
  deriveKey,
  type KeyDerivation,
  type KeySource,
  keyFromEnv,
  newDerivation,
  readKeyFile,
  type StoreKey,
} from "../storage/secret-key.js";
import { writeFileAtomic } from "../storage/write-file-atomic.js";
import type { CredentialVault, UserServerRecord } from "./user-credentials.js";

const FORMAT = "mcplex-credentials";
const VERSION = 1;
/** Largest vault file read: thousands of users' records stay far below. */
const MAX_VAULT_BYTES = 64 * 1024 * 1024;

/** Options of {@link FileCredentialVault}; the paths are for tests and unusual setups. */
export interface FileCredentialVaultOptions {
  /** The vault file. Default `credentials.json` beside the secret store (`defaultSecretStorePath`). */
  file?: string;
  /** The key file, used when `MCPLEX_SECRET_KEY` is unset. Default the secret store's `secret.key`. */
  keyFile?: string;
  /** Environment for `MCPLEX_SECRET_KEY`, `MCPLEX_HOME`, `XDG_CONFIG_HOME`. Default `process.env`. */
  env?: Readonly<Record<string, string | undefined>>;
}

/** The file: a header naming the key (as the secret store's), and one sealed record per (user, server). */
interface VaultFile {
  format: typeof FORMAT;
  version: number;
  kdf: KeyDerivation;
  check: string;
  /** User key → server name → base64 of IV (12) + tag (16) + AES-256-GCM ciphertext. */
  records: Record<string, Record<string, string>>;
}

/** The path of the credential vault beside the secret store. */
export function defaultCredentialVaultPath(
  env: Readonly<Record<string, string | undefined>> = process.env,
): string {
  return join(dirname(defaultSecretStorePath(env)), "credentials.json");
}

/**
 * Each user's credentials for per-user servers in one file beside the secret store, with the
 * secret store's key (`MCPLEX_SECRET_KEY`, else its key file): every record is sealed apart
 * (AES-256-GCM, a fresh IV, its user and server bound in as associated data, so a record
 * cannot be moved to another user), so the file holds user keys (digests) and server names in
 * clear, never a token or a value. Changes are read-modify-writes under a lock file and
 * replace the file atomically (mode 0600): writers in several processes all land.
 *
 * @example
 * const vault = new FileCredentialVault();
 * await vault.put(user.key, "github", { oauth: { tokens }, connectedAt: Date.now() });
 */
export class FileCredentialVault implements CredentialVault {
  /** Path of the vault file. */
  readonly file: string;
  /** Path of the key file (used when `MCPLEX_SECRET_KEY` is unset). */
  readonly keyFile: string;
  readonly #env: Readonly<Record<string, string | undefined>>;
  /** The derived key of the last header seen: scrypt runs once per process, not per read. */
  #key: { header: string; key: StoreKey } | undefined;
  /** The file as last parsed, and which version of it (inode, size, mtime). */
  #parsed: { version: string; file: VaultFile } | undefined;

  constructor(options: FileCredentialVaultOptions = {}) {
    this.#env = options.env ?? process.env;
    this.file = options.file ?? defaultCredentialVaultPath(this.#env);
    this.keyFile = options.keyFile ?? join(dirname(defaultSecretStorePath(this.#env)), "secret.key");
  }

  async get(user: string, server: string): Promise<UserServerRecord | undefined> {
    const vault = await this.#read();
    const sealed = vault?.file.records[user]?.[server];
    if (vault === undefined || sealed === undefined) return undefined;
    return JSON.parse(this.#open(sealed, vault.key, user, server)) as UserServerRecord;
  }

  async put(user: string, server: string, record: UserServerRecord): Promise<void> {
    await this.#change(async (file, key) => {
      const records = file.records[user] ?? {};
      records[server] = this.#seal(JSON.stringify(record), key, user, server);
      file.records[user] = records;
      return true;
    });
  }

  async delete(user: string, server?: string): Promise<string[]> {
    let deleted: string[] = [];
    await this.#change(async (file) => {
      const records = file.records[user];
      if (records === undefined) return false;
      deleted = server === undefined ? Object.keys(records) : server in records ? [server] : [];
      if (deleted.length === 0) return false;
      for (const name of deleted) delete records[name];
      if (Object.keys(records).length === 0) delete file.records[user];
      return true;
    });
    return deleted;
  }

  async servers(user: string): Promise<string[]> {
    return Object.keys((await this.#read())?.file.records[user] ?? {}).sort();
  }

  async users(): Promise<string[]> {
    return Object.keys((await this.#read())?.file.records ?? {}).sort();
  }

  exclusive<T>(user: string, server: string, run: () => Promise<T>): Promise<T> {
    // A lock file of its own per (user, server): a refresh holds it through a round trip to the
    // authorization server, and must not hold up other users' writes meanwhile.
    const name = createHash("sha256").update(`${user}\0${server}`).digest("base64url").slice(0, 22);
    const lock = `${this.file}.${name}.lock`;
    return withFileLock(lock, run, { waitMs: 35_000 });
  }

  /** Runs `change` on the file as it is now under the file's lock, and writes it when it says so. */
  async #change(change: (file: VaultFile, key: StoreKey) => Promise<boolean>): Promise<void> {
    await mkdir(dirname(this.file), { recursive: true, mode: 0o700 });
    const lock = `${this.file}.lock`;
    await withFileLock(lock, async () => {
      const read = (await this.#read()) ?? (await this.#create());
      // A copy: the file as read is kept for readers until the new one replaces it.
      const file = { ...read.file, records: structuredClone(read.file.records) };
      if (!(await change(file, read.key))) return;
      try {
        await writeFileAtomic(this.file, `${JSON.stringify(file)}\n`, { mode: 0o600 });
      } catch (error) {
        throw new SecretStoreError(
          "SECRET_STORE_INVALID",
          `cannot write credential vault ${this.file}`,
          {},
          { cause: error },
        );
      }
    });
  }

  async #create(): Promise<{ file: VaultFile; key: StoreKey }> {
    const source = (await this.#keySource()) ?? (await createKeyFile(this.keyFile));
    const key = await deriveKey(source, newDerivation(source));
    const file: VaultFile = {
      format: FORMAT,
      version: VERSION,
      kdf: key.kdf,
      check: key.check.toString("base64"),
      records: {},
    };
    return { file, key };
  }

  async #read(): Promise<{ file: VaultFile; key: StoreKey } | undefined> {
    // Every per-user call may look here: the file is parsed again only once it was replaced
    // (each write renames a new file in: a new inode), by this process or another.
    const seen = await stat(this.file).catch(() => undefined);
    const cached = this.#parsed;
    if (seen !== undefined && cached !== undefined && cached.version === versionOf(seen))
      return { file: cached.file, key: await this.#keyFor(cached.file) };
    let found: Awaited<ReturnType<typeof readRegularFile>>;
    try {
      found = await readRegularFile(this.file, MAX_VAULT_BYTES);
    } catch (error) {
      throw new SecretStoreError(
        "SECRET_STORE_INVALID",
        `cannot read credential vault ${this.file}`,
        {},
        { cause: error },
      );
    }
    if (found.kind === "missing") return undefined;
    if (found.kind !== "read") throw this.#invalid("is not a regular file of a reasonable size");
    let file: Partial<VaultFile>;
    try {
      file = JSON.parse(found.text) as Partial<VaultFile>;
    } catch {
      throw this.#invalid("is truncated or not a mcplex credential vault");
    }
    if (file?.format !== FORMAT || file.version !== VERSION || typeof file.check !== "string")
      throw this.#invalid(`is not a version ${VERSION} mcplex credential vault`);
    if (typeof file.records !== "object" || file.records === null || typeof file.kdf?.name !== "string")
      throw this.#invalid("is missing fields");
    const problem = derivationProblem(file.kdf);
    if (problem !== undefined) throw this.#invalid(problem);
    const key = await this.#keyFor(file as VaultFile);
    if (seen !== undefined) this.#parsed = { version: versionOf(seen), file: file as VaultFile };
    return { file: file as VaultFile, key };
  }

  async #keyFor(file: VaultFile): Promise<StoreKey> {
    const header = JSON.stringify([file.kdf, file.check]);
    if (this.#key?.header === header) return this.#key.key;
    const source = await this.#keySource();
    if (source === undefined) {
      throw new SecretStoreError("SECRET_KEY_INVALID", `no key to open credential vault ${this.file}`, {
        hint: `set MCPLEX_SECRET_KEY, or restore the key file ${this.keyFile}`,
      });
    }
    const key = await deriveKey(source, file.kdf);
    const check = Buffer.from(file.check, "base64");
    if (check.length !== key.check.length || !timingSafeEqual(check, key.check)) {
      throw new SecretStoreError(
        "SECRET_KEY_INVALID",
        `the secret key does not open credential vault ${this.file}`,
        {
          hint: "use the key the vault was written with; to start over, move the vault away (users connect again)",
        },
      );
    }
    this.#key = { header, key };
    return key;
  }

  async #keySource(): Promise<KeySource | undefined> {
    return keyFromEnv(this.#env.MCPLEX_SECRET_KEY) ?? (await readKeyFile(this.keyFile));
  }

  #seal(text: string, key: StoreKey, user: string, server: string): string {
    return sealText(key.encryption, text, boundTo(user, server));
  }

  #open(sealed: string, key: StoreKey, user: string, server: string): string {
    try {
      return openText(key.encryption, sealed, boundTo(user, server));
    } catch {
      throw this.#invalid(`holds a record for server ${server} that was modified or moved`);
    }
  }

  #invalid(problem: string): SecretStoreError {
    return new SecretStoreError("SECRET_STORE_INVALID", `credential vault ${this.file} ${problem}`, {
      hint: "restore it from a backup, or move it away (users connect their servers again)",
    });
  }
}

/** The associated data of a record: the user and the server it belongs to. */
function boundTo(user: string, server: string): Buffer {
  return Buffer.from(`mcplex-credentials\0${user}\0${server}`, "utf8");
}

/** Which version of the file `stats` describe: a write renames a new file in, so a new inode. */
function versionOf(stats: Stats): string {
  return `${stats.ino}:${stats.size}:${stats.mtimeMs}`;
}
