import { createCipheriv, createDecipheriv, randomBytes, timingSafeEqual } from "node:crypto";
import { mkdir } from "node:fs/promises";
import { homedir } from "node:os";
import { dirname, join } from "node:path";
import { SecretStoreError } from "../errors.js";
import { withFileLock } from "../storage/file-lock.js";
import { type RegularFileRead, readRegularFile } from "../storage/read-regular-file.js";
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

/** Secret names: what `${secret:NAME}` can refer to. */
export const SECRET_NAME = /^[A-Za-z_][A-Za-z0-9_.-]{0,127}$/;

const FORMAT = "mcplex-secrets";
const VERSION = 1;
/** Largest store file read; a store of many secrets stays far below. */
const MAX_STORE_BYTES = 16 * 1024 * 1024;

/** Options of {@link SecretStore}; all paths are for tests and unusual setups. */
export interface SecretStoreOptions {
  /** The encrypted store. Default: see {@link defaultSecretStorePath}. */
  file?: string;
  /** The key file, used when `MCPLEX_SECRET_KEY` is unset. Default `secret.key` beside the store. */
  keyFile?: string;
  /** Environment for `MCPLEX_SECRET_KEY`, `MCPLEX_HOME`, `XDG_CONFIG_HOME`. Default `process.env`. */
  env?: Readonly<Record<string, string | undefined>>;
}

/** `$MCPLEX_HOME/secrets.enc`, else `$XDG_CONFIG_HOME/mcplex/secrets.enc`, else `~/.config/mcplex/secrets.enc`. */
export function defaultSecretStorePath(
  env: Readonly<Record<string, string | undefined>> = process.env,
): string {
  if (env.MCPLEX_HOME) return join(env.MCPLEX_HOME, "secrets.enc");
  return join(env.XDG_CONFIG_HOME || join(homedir(), ".config"), "mcplex", "secrets.enc");
}

interface Envelope {
  format: typeof FORMAT;
  version: number;
  kdf: KeyDerivation;
  check: string;
  iv: string;
  tag: string;
  data: string;
}

/**
 * Secrets at rest, for `${secret:NAME}` in config files.
 *
 * The store is one JSON envelope (format, version, key derivation, key check value, IV, tag,
 * ciphertext) holding the AES-256-GCM encryption of a JSON map of names to values. The header
 * is authenticated as associated data; every write uses a fresh 12-byte IV and replaces the
 * file atomically (temp file + rename, mode 0600). The key comes from `MCPLEX_SECRET_KEY`
 * (64 hex chars or base64 of 32 bytes as the key; anything else as a passphrase through
 * scrypt) or else from a key file created on the first `set` (mode 0600 in a 0700 directory).
 * A wrong key is SECRET_KEY_INVALID; a modified or truncated store is SECRET_STORE_INVALID.
 * Changes from several processes at once all land: each one reads, changes and writes the
 * store under a lock file beside it.
 *
 * @example
 * const store = new SecretStore();
 * await store.set("github", "ghp_...");
 * await store.get("github"); // "ghp_..."
 */
export class SecretStore {
  /** Path of the encrypted store. */
  readonly file: string;
  /** Path of the key file (used when `MCPLEX_SECRET_KEY` is unset). */
  readonly keyFile: string;
  private readonly env: Readonly<Record<string, string | undefined>>;
  private queue: Promise<unknown> = Promise.resolve();

  constructor(options: SecretStoreOptions = {}) {
    this.env = options.env ?? process.env;
    this.file = options.file ?? defaultSecretStorePath(this.env);
    this.keyFile = options.keyFile ?? join(dirname(this.file), "secret.key");
  }

  /** The value of a secret, or `undefined`. */
  async get(name: string): Promise<string | undefined> {
    checkSecretName(name);
    return (await this.readAll()).get(name);
  }

  /** Every secret, by name. Reads (and decrypts) the store once. */
  readAll(): Promise<Map<string, string>> {
    return this.serial(async () => new Map(Object.entries((await this.load())?.values ?? {})));
  }

  /** Names of the stored secrets, sorted; never the values. */
  async list(): Promise<string[]> {
    return [...(await this.readAll()).keys()].sort();
  }

  /** Stores (or replaces) a secret; creates the store and, if needed, the key file. */
  async set(name: string, value: string): Promise<void> {
    checkSecretName(name);
    if (typeof value !== "string")
      throw new SecretStoreError("INVALID_ARGUMENT", "a secret value must be a string");
    return this.exclusive(async () => {
      const current = (await this.load()) ?? { values: {}, key: await this.newKey() };
      await this.write({ ...current.values, [name]: value }, current.key);
    });
  }

  /** Removes a secret; `false` when there was none. */
  async remove(name: string): Promise<boolean> {
    checkSecretName(name);
    return this.exclusive(async () => {
      const current = await this.load();
      if (current === undefined || !Object.hasOwn(current.values, name)) return false;
      const { [name]: _removed, ...rest } = current.values;
      await this.write(rest, current.key);
      return true;
    });
  }

  /** Runs store operations of this instance one at a time, so concurrent `set`s all land. */
  private serial<T>(operation: () => Promise<T>): Promise<T> {
    const run = this.queue.then(operation, operation);
    this.queue = run.catch(() => undefined);
    return run;
  }

  /** A read-modify-write: one at a time in this instance, and under a lock file between processes. */
  private exclusive<T>(operation: () => Promise<T>): Promise<T> {
    return this.serial(() => withFileLock(`${this.file}.lock`, operation));
  }

  private async keySource(): Promise<KeySource | undefined> {
    return keyFromEnv(this.env.MCPLEX_SECRET_KEY) ?? (await readKeyFile(this.keyFile));
  }

  private async newKey(): Promise<StoreKey> {
    const source = (await this.keySource()) ?? (await createKeyFile(this.keyFile));
    return deriveKey(source, newDerivation(source));
  }

  private async load(): Promise<{ values: Record<string, string>; key: StoreKey } | undefined> {
    const text = await this.readStoreFile();
    if (text === undefined) return undefined;
    const envelope = this.parseEnvelope(text);
    const source = await this.keySource();
    if (source === undefined) {
      throw new SecretStoreError("SECRET_KEY_INVALID", `no key to open secret store ${this.file}`, {
        hint: `set MCPLEX_SECRET_KEY, or restore the key file ${this.keyFile}`,
      });
    }
    const key = await deriveKey(source, envelope.kdf);
    const check = Buffer.from(envelope.check, "base64");
    if (check.length !== key.check.length || !timingSafeEqual(check, key.check)) {
      const origin = source.kind === "raw" ? source.origin : "the MCPLEX_SECRET_KEY passphrase";
      throw new SecretStoreError(
        "SECRET_KEY_INVALID",
        `the key from ${origin} does not open secret store ${this.file}`,
        {
          hint: "use the key the store was written with; to start over, move the store file away",
        },
      );
    }
    return { values: this.decrypt(envelope, key), key };
  }

  /** The store file's text, or `undefined` when there is none. */
  private async readStoreFile(): Promise<string | undefined> {
    let found: RegularFileRead;
    try {
      found = await readRegularFile(this.file, MAX_STORE_BYTES);
    } catch (error) {
      throw new SecretStoreError(
        "SECRET_STORE_INVALID",
        `cannot read secret store ${this.file}`,
        {},
        { cause: error },
      );
    }
    switch (found.kind) {
      case "missing":
        return undefined;
      case "not-regular":
        throw new SecretStoreError(
          "SECRET_STORE_INVALID",
          `secret store ${this.file} is not a regular file`,
          {
            hint: "move it away (mcplex writes the store itself on the next `mcplex secrets set`), or point MCPLEX_HOME elsewhere",
          },
        );
      case "too-large":
        throw this.invalid(`is ${found.size} bytes, more than a secret store can be (${MAX_STORE_BYTES})`);
      case "read":
        return found.text;
    }
  }

  private parseEnvelope(text: string): Envelope {
    let data: Partial<Envelope>;
    try {
      data = JSON.parse(text) as Partial<Envelope>;
    } catch {
      throw this.invalid("is truncated or not a mcplex secret store");
    }
    if (data?.format !== FORMAT) throw this.invalid("is not a mcplex secret store");
    if (data.version !== VERSION)
      throw this.invalid(`has version ${String(data.version)}; this mcplex reads ${VERSION}`);
    const fields = [data.check, data.iv, data.tag, data.data];
    if (!fields.every((f) => typeof f === "string") || typeof data.kdf?.name !== "string") {
      throw this.invalid("is missing fields");
    }
    const kdf = data.kdf;
    if (kdf.name !== "none" && !(kdf.name === "scrypt" && typeof kdf.salt === "string")) {
      throw this.invalid(`names an unknown key derivation "${kdf.name}"`);
    }
    // Checked before deriving anything: the header is only authenticated after the derivation.
    const problem = derivationProblem(kdf);
    if (problem !== undefined) throw this.invalid(problem);
    return data as Envelope;
  }

  private decrypt(envelope: Envelope, key: StoreKey): Record<string, string> {
    const iv = Buffer.from(envelope.iv, "base64");
    const tag = Buffer.from(envelope.tag, "base64");
    if (iv.length !== 12 || tag.length !== 16) throw this.invalid("has a malformed IV or tag");
    let plain: string;
    try {
      const decipher = createDecipheriv("aes-256-gcm", key.encryption, iv);
      decipher.setAAD(associatedData(envelope.version, envelope.kdf, envelope.check));
      decipher.setAuthTag(tag);
      plain = Buffer.concat([
        decipher.update(Buffer.from(envelope.data, "base64")),
        decipher.final(),
      ]).toString("utf8");
    } catch {
      throw this.invalid("was modified or is damaged (authentication failed)");
    }
    const values = JSON.parse(plain) as unknown;
    if (values === null || typeof values !== "object" || Array.isArray(values))
      throw this.invalid("holds no secret map");
    return values as Record<string, string>;
  }

  private async write(values: Record<string, string>, key: StoreKey): Promise<void> {
    const iv = randomBytes(12);
    const check = key.check.toString("base64");
    const cipher = createCipheriv("aes-256-gcm", key.encryption, iv);
    cipher.setAAD(associatedData(VERSION, key.kdf, check));
    const data = Buffer.concat([cipher.update(JSON.stringify(values), "utf8"), cipher.final()]);
    const envelope: Envelope = {
      format: FORMAT,
      version: VERSION,
      kdf: key.kdf,
      check,
      iv: iv.toString("base64"),
      tag: cipher.getAuthTag().toString("base64"),
      data: data.toString("base64"),
    };
    await mkdir(dirname(this.file), { recursive: true, mode: 0o700 });
    try {
      await writeFileAtomic(this.file, `${JSON.stringify(envelope, null, 2)}\n`, { mode: 0o600 });
    } catch (error) {
      throw new SecretStoreError(
        "SECRET_STORE_INVALID",
        `cannot write secret store ${this.file}`,
        {},
        { cause: error },
      );
    }
  }

  private invalid(problem: string): SecretStoreError {
    return new SecretStoreError("SECRET_STORE_INVALID", `secret store ${this.file} ${problem}`, {
      hint: "restore it from a backup, or move it away and set the secrets again",
    });
  }
}

/** The envelope header, bound to the ciphertext so it cannot be swapped or edited. */
function associatedData(version: number, kdf: KeyDerivation, check: string): Buffer {
  return Buffer.from(JSON.stringify({ format: FORMAT, version, kdf, check }), "utf8");
}

function checkSecretName(name: string): void {
  if (typeof name === "string" && SECRET_NAME.test(name)) return;
  throw new SecretStoreError("INVALID_ARGUMENT", `secret name ${JSON.stringify(name)} is not allowed`, {
    hint: 'use letters, digits, "_", "-", "." (starting with a letter or "_"), at most 128 characters',
  });
}
