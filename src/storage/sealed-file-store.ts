import { timingSafeEqual } from "node:crypto";
import type { Stats } from "node:fs";
import { mkdir, stat } from "node:fs/promises";
import { dirname } from "node:path";
import { SecretStoreError } from "../errors.js";
import { withFileLock } from "./file-lock.js";
import { type RegularFileRead, readRegularFile } from "./read-regular-file.js";
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
} from "./secret-key.js";
import { writeFileAtomic } from "./write-file-atomic.js";

/** What every sealed file holds in clear beside its sealed content: which key opens it. */
export interface SealedFileHeader {
  /** How the key was derived from its source (never the key). */
  kdf: KeyDerivation;
  /** Base64 of the key's check value ({@link StoreKey.check}): a wrong key is told apart from damage. */
  check: string;
}

/** A sealed file's content as parsed, with the key that opens what it seals. */
export interface OpenedFile<T extends SealedFileHeader> {
  content: T;
  key: StoreKey;
}

/** Options of {@link SealedFileStore}: where the file and its key are, and what its owner says. */
export interface SealedFileStoreOptions<T extends SealedFileHeader> {
  /** The sealed JSON file. Its lock file is `<file>.lock`. */
  file: string;
  /** The key file, used when `MCPLEX_SECRET_KEY` is unset; created with a new key on the first write. */
  keyFile: string;
  /** Environment for `MCPLEX_SECRET_KEY`. */
  env: Readonly<Record<string, string | undefined>>;
  /** How messages name the file: `secret store`, `credential vault`. */
  noun: string;
  /** Largest file read. */
  maxBytes: number;
  /** Indentation of the JSON written (`JSON.stringify`'s third argument); none by default. */
  indent?: number;
  /**
   * Keep the file as last parsed and its derived key while the file is unchanged (same inode,
   * size and mtime: every write renames a new file in), so scrypt runs once per process and not
   * per read. Without it every read reads the file and the key source again, so a key file
   * removed meanwhile is noticed.
   */
  remember?: boolean;
  /**
   * The parsed JSON checked for the owner's format, version and fields, returned as its content;
   * throws the owner's error. Runs before any key is looked for; the scrypt parameters of `kdf`
   * are checked after it.
   */
  check: (data: unknown) => T;
  /** The error for a file that is damaged (`problem` follows the file's name: "is truncated..."). */
  invalid: (problem: string) => SecretStoreError;
  /** The error for a path that holds no regular file, or one larger than `maxBytes`. */
  unfit: (found: Exclude<RegularFileRead, { kind: "missing" | "read" }>) => SecretStoreError;
  /** The error for a key (from `source`) whose check value is not the file's. */
  wrongKey: (source: KeySource) => SecretStoreError;
}

/**
 * An encrypted JSON file under a lock file, the storage of the secret store and of the file
 * credential vault: a header in clear naming how the key was derived and a check value of the
 * key, beside content its owner seals with that key. The key comes from `MCPLEX_SECRET_KEY`,
 * else from the key file, which the first write creates. Changes are read-modify-writes under
 * `<file>.lock`, so writers in several processes all land, and replace the file atomically
 * (temp file and rename, mode 0600, its directory 0700).
 *
 * Errors are {@link SecretStoreError}s naming the file, never a secret: SECRET_STORE_INVALID
 * for a file that cannot be read or written or is damaged, SECRET_KEY_INVALID for a missing or
 * wrong key. The owner gives the messages that differ by what the file is.
 *
 * @example
 * const store = new SealedFileStore<Notes>({ file, keyFile, env, noun: "notes file", check, ... });
 * await store.update(async (current) => {
 *   const key = current?.key ?? (await store.newKey());
 *   const notes = { ...current?.content.notes, a: sealText(key.encryption, "text", boundTo) };
 *   return { ...sealedFileHeader(key), notes };
 * });
 */
export class SealedFileStore<T extends SealedFileHeader> {
  /** Path of the sealed file. */
  readonly file: string;
  /** Path of the key file (used when `MCPLEX_SECRET_KEY` is unset). */
  readonly keyFile: string;
  readonly #options: SealedFileStoreOptions<T>;
  /** The derived key of the last header seen, when remembering. */
  #key: { header: string; key: StoreKey } | undefined;
  /** The file as last parsed, and which version of it (inode, size, mtime), when remembering. */
  #parsed: { version: string; content: T } | undefined;

  constructor(options: SealedFileStoreOptions<T>) {
    this.#options = options;
    this.file = options.file;
    this.keyFile = options.keyFile;
  }

  /** The file's content and its key, or `undefined` when there is no file. */
  async read(): Promise<OpenedFile<T> | undefined> {
    // Stat first: a file replaced between the stat and the read is parsed again next time.
    const seen = this.#options.remember ? await stat(this.file).catch(() => undefined) : undefined;
    const cached = this.#parsed;
    if (seen !== undefined && cached !== undefined && cached.version === versionOf(seen))
      return { content: cached.content, key: await this.#keyFor(cached.content) };
    const text = await this.#readText();
    if (text === undefined) return undefined;
    let data: unknown;
    try {
      data = JSON.parse(text);
    } catch {
      throw this.#options.invalid(`is truncated or not a mcplex ${this.#options.noun}`);
    }
    const content = this.#options.check(data);
    // Checked before deriving anything: the header is only authenticated after the derivation.
    const problem = derivationProblem(content.kdf);
    if (problem !== undefined) throw this.#options.invalid(problem);
    const key = await this.#keyFor(content);
    if (seen !== undefined) this.#parsed = { version: versionOf(seen), content };
    return { content, key };
  }

  /**
   * A read-modify-write under the lock file: `change` gets the file as it is now (`undefined`
   * when there is none) and returns the content to write, or `undefined` to leave the file as
   * it is. The content read may be the one remembered: `change` copies what it alters.
   */
  async update(change: (current: OpenedFile<T> | undefined) => Promise<T | undefined>): Promise<void> {
    await withFileLock(`${this.file}.lock`, async () => {
      const next = await change(await this.read());
      if (next === undefined) return;
      await mkdir(dirname(this.file), { recursive: true, mode: 0o700 });
      const text = `${JSON.stringify(next, null, this.#options.indent)}\n`;
      try {
        await writeFileAtomic(this.file, text, { mode: 0o600 });
      } catch (error) {
        throw new SecretStoreError(
          "SECRET_STORE_INVALID",
          `cannot write ${this.#options.noun} ${this.file}`,
          {},
          { cause: error },
        );
      }
    });
  }

  /** A key for a new file: from `MCPLEX_SECRET_KEY` or the key file, which is created if missing. */
  async newKey(): Promise<StoreKey> {
    const source = (await this.#keySource()) ?? (await createKeyFile(this.keyFile));
    return deriveKey(source, newDerivation(source));
  }

  /** The file's text, or `undefined` when there is none. */
  async #readText(): Promise<string | undefined> {
    let found: RegularFileRead;
    try {
      found = await readRegularFile(this.file, this.#options.maxBytes);
    } catch (error) {
      throw new SecretStoreError(
        "SECRET_STORE_INVALID",
        `cannot read ${this.#options.noun} ${this.file}`,
        {},
        { cause: error },
      );
    }
    if (found.kind === "missing") return undefined;
    if (found.kind !== "read") throw this.#options.unfit(found);
    return found.text;
  }

  /** The key that opens `content`, checked against its check value. */
  async #keyFor(content: T): Promise<StoreKey> {
    const header = JSON.stringify([content.kdf, content.check]);
    if (this.#options.remember && this.#key?.header === header) return this.#key.key;
    const source = await this.#keySource();
    if (source === undefined) {
      throw new SecretStoreError("SECRET_KEY_INVALID", `no key to open ${this.#options.noun} ${this.file}`, {
        hint: `set MCPLEX_SECRET_KEY, or restore the key file ${this.keyFile}`,
      });
    }
    const key = await deriveKey(source, content.kdf);
    const check = Buffer.from(content.check, "base64");
    if (check.length !== key.check.length || !timingSafeEqual(check, key.check))
      throw this.#options.wrongKey(source);
    if (this.#options.remember) this.#key = { header, key };
    return key;
  }

  async #keySource(): Promise<KeySource | undefined> {
    return keyFromEnv(this.#options.env.MCPLEX_SECRET_KEY) ?? (await readKeyFile(this.keyFile));
  }
}

/** The header of a new file sealed with `key`. */
export function sealedFileHeader(key: StoreKey): SealedFileHeader {
  return { kdf: key.kdf, check: key.check.toString("base64") };
}

/** Which version of the file `stats` describe: a write renames a new file in, so a new inode. */
function versionOf(stats: Stats): string {
  return `${stats.ino}:${stats.size}:${stats.mtimeMs}`;
}
