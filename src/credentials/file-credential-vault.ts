import { createHash } from "node:crypto";
import { join } from "node:path";
import { SecretStoreError } from "../errors.js";
import { withFileLock } from "../storage/file-lock.js";
import { mcplexHome } from "../storage/mcplex-home.js";
import { SealedFileStore, sealedFileHeader } from "../storage/sealed-file-store.js";
import { openText, sealText } from "../storage/sealed-text.js";
import type { KeyDerivation, StoreKey } from "../storage/secret-key.js";
import type { CredentialVault, UserServerRecord } from "./user-credentials.js";

const FORMAT = "mcplex-credentials";
const VERSION = 1;
/** Largest vault file read: thousands of users' records stay far below. */
const MAX_VAULT_BYTES = 64 * 1024 * 1024;

/** Options of {@link FileCredentialVault}; the paths are for tests and unusual setups. */
export interface FileCredentialVaultOptions {
  /** The vault file. Default `credentials.json` beside the secret store, in `mcplexHome(env)`. */
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
  return join(mcplexHome(env), "credentials.json");
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
  readonly #sealed: SealedFileStore<VaultFile>;

  constructor(options: FileCredentialVaultOptions = {}) {
    const env = options.env ?? process.env;
    this.file = options.file ?? defaultCredentialVaultPath(env);
    // The secret store's key file, beside it in the same directory.
    this.keyFile = options.keyFile ?? join(mcplexHome(env), "secret.key");
    this.#sealed = new SealedFileStore<VaultFile>({
      file: this.file,
      keyFile: this.keyFile,
      env,
      noun: "credential vault",
      maxBytes: MAX_VAULT_BYTES,
      // Every per-user call may look here: the file is parsed again only once it was replaced,
      // by this process or another, and scrypt runs once per process, not per read.
      remember: true,
      check: (data) => this.#check(data as Partial<VaultFile> | null),
      invalid: (problem) => this.#invalid(problem),
      unfit: () => this.#invalid("is not a regular file of a reasonable size"),
      wrongKey: () =>
        new SecretStoreError(
          "SECRET_KEY_INVALID",
          `the secret key does not open credential vault ${this.file}`,
          {
            hint: "use the key the vault was written with; to start over, move the vault away (users connect again)",
          },
        ),
    });
  }

  async get(user: string, server: string): Promise<UserServerRecord | undefined> {
    const vault = await this.#sealed.read();
    const sealed = vault?.content.records[user]?.[server];
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
    return Object.keys((await this.#sealed.read())?.content.records[user] ?? {}).sort();
  }

  async users(): Promise<string[]> {
    return Object.keys((await this.#sealed.read())?.content.records ?? {}).sort();
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
    await this.#sealed.update(async (read) => {
      const { content, key } = read ?? (await this.#create());
      // A copy: the file as read is kept for readers until the new one replaces it.
      const file = { ...content, records: structuredClone(content.records) };
      return (await change(file, key)) ? file : undefined;
    });
  }

  async #create(): Promise<{ content: VaultFile; key: StoreKey }> {
    const key = await this.#sealed.newKey();
    const { kdf, check } = sealedFileHeader(key);
    return { content: { format: FORMAT, version: VERSION, kdf, check, records: {} }, key };
  }

  /** The vault file's JSON checked for format, version and fields; its scrypt parameters are checked after. */
  #check(file: Partial<VaultFile> | null): VaultFile {
    if (file?.format !== FORMAT || file.version !== VERSION || typeof file.check !== "string")
      throw this.#invalid(`is not a version ${VERSION} mcplex credential vault`);
    if (typeof file.records !== "object" || file.records === null || typeof file.kdf?.name !== "string")
      throw this.#invalid("is missing fields");
    return file as VaultFile;
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
