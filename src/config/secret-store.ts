import { createCipheriv, createDecipheriv, randomBytes } from "node:crypto";
import { dirname, join } from "node:path";
import { SecretStoreError } from "../errors.js";
import { mcplexHome } from "../storage/mcplex-home.js";
import { type OpenedFile, SealedFileStore, sealedFileHeader } from "../storage/sealed-file-store.js";
import type { KeyDerivation, KeySource, StoreKey } from "../storage/secret-key.js";

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
  return join(mcplexHome(env), "secrets.enc");
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
 * store under a lock file beside it. File, key and lock are a `SealedFileStore`
 * (`storage/sealed-file-store.ts`), as the file credential vault's are.
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
  private readonly sealed: SealedFileStore<Envelope>;
  private queue: Promise<unknown> = Promise.resolve();

  constructor(options: SecretStoreOptions = {}) {
    const env = options.env ?? process.env;
    this.file = options.file ?? defaultSecretStorePath(env);
    this.keyFile = options.keyFile ?? join(dirname(this.file), "secret.key");
    this.sealed = new SealedFileStore<Envelope>({
      file: this.file,
      keyFile: this.keyFile,
      env,
      noun: "secret store",
      maxBytes: MAX_STORE_BYTES,
      indent: 2,
      check: (data) => this.checkEnvelope(data as Partial<Envelope> | null),
      invalid: (problem) => this.invalid(problem),
      unfit: (found) => this.unfit(found),
      wrongKey: (source) => this.wrongKey(source),
    });
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
    return this.exclusive(async (opened) => {
      const current = this.opened(opened) ?? { values: {}, key: await this.sealed.newKey() };
      return this.envelope({ ...current.values, [name]: value }, current.key);
    });
  }

  /** Removes a secret; `false` when there was none. */
  async remove(name: string): Promise<boolean> {
    checkSecretName(name);
    let removed = false;
    await this.exclusive(async (opened) => {
      const current = this.opened(opened);
      if (current === undefined || !Object.hasOwn(current.values, name)) return undefined;
      const { [name]: _removed, ...rest } = current.values;
      removed = true;
      return this.envelope(rest, current.key);
    });
    return removed;
  }

  /** Runs store operations of this instance one at a time, so concurrent `set`s all land. */
  private serial<T>(operation: () => Promise<T>): Promise<T> {
    const run = this.queue.then(operation, operation);
    this.queue = run.catch(() => undefined);
    return run;
  }

  /**
   * A read-modify-write of the store: one at a time in this instance, and under a lock file
   * between processes. `change` returns the envelope to write, or `undefined` to write nothing.
   */
  private exclusive(
    change: (opened: OpenedFile<Envelope> | undefined) => Promise<Envelope | undefined>,
  ): Promise<void> {
    return this.serial(() => this.sealed.update(change));
  }

  private async load(): Promise<{ values: Record<string, string>; key: StoreKey } | undefined> {
    return this.opened(await this.sealed.read());
  }

  /** The secrets of an opened store file, decrypted. */
  private opened(
    opened: OpenedFile<Envelope> | undefined,
  ): { values: Record<string, string>; key: StoreKey } | undefined {
    if (opened === undefined) return undefined;
    return { values: this.decrypt(opened.content, opened.key), key: opened.key };
  }

  /** The store file's JSON checked as an envelope; its scrypt parameters are checked after. */
  private checkEnvelope(data: Partial<Envelope> | null): Envelope {
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

  /** The envelope of `values` encrypted under `key`, with a fresh IV. */
  private envelope(values: Record<string, string>, key: StoreKey): Envelope {
    const iv = randomBytes(12);
    const { kdf, check } = sealedFileHeader(key);
    const cipher = createCipheriv("aes-256-gcm", key.encryption, iv);
    cipher.setAAD(associatedData(VERSION, kdf, check));
    const data = Buffer.concat([cipher.update(JSON.stringify(values), "utf8"), cipher.final()]);
    return {
      format: FORMAT,
      version: VERSION,
      kdf,
      check,
      iv: iv.toString("base64"),
      tag: cipher.getAuthTag().toString("base64"),
      data: data.toString("base64"),
    };
  }

  private unfit(found: { kind: "not-regular" } | { kind: "too-large"; size: number }): SecretStoreError {
    if (found.kind === "too-large")
      return this.invalid(`is ${found.size} bytes, more than a secret store can be (${MAX_STORE_BYTES})`);
    return new SecretStoreError("SECRET_STORE_INVALID", `secret store ${this.file} is not a regular file`, {
      hint: "move it away (mcplex writes the store itself on the next `mcplex secrets set`), or point MCPLEX_HOME elsewhere",
    });
  }

  private wrongKey(source: KeySource): SecretStoreError {
    const origin = source.kind === "raw" ? source.origin : "the MCPLEX_SECRET_KEY passphrase";
    return new SecretStoreError(
      "SECRET_KEY_INVALID",
      `the key from ${origin} does not open secret store ${this.file}`,
      {
        hint: "use the key the store was written with; to start over, move the store file away",
      },
    );
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
