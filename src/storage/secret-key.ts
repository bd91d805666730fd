import { createHmac, hkdfSync, randomBytes, scrypt } from "node:crypto";
import { mkdir, writeFile } from "node:fs/promises";
import { dirname } from "node:path";
import { SecretStoreError } from "../errors.js";
import { type RegularFileRead, readRegularFile } from "./read-regular-file.js";

/** How the master key was obtained; stored (without the key) in the store's header. */
export type KeyDerivation =
  | { name: "none" }
  | { name: "scrypt"; salt: string; N: number; r: number; p: number };

/** The keys used for one store: an AES-256-GCM key and a check value that tells a wrong key apart. */
export interface StoreKey {
  kdf: KeyDerivation;
  encryption: Buffer;
  check: Buffer;
}

/** Where the master key comes from. */
export type KeySource =
  | { kind: "raw"; key: Buffer; origin: string }
  | { kind: "passphrase"; passphrase: string };

/**
 * The scrypt parameters mcplex writes (32 MiB, a fraction of a second), and the most it will
 * run: a store's header could otherwise ask for minutes of work and gigabytes of memory.
 */
export const SCRYPT = { N: 2 ** 15, r: 8, p: 1 } as const;
/** Longest salt accepted, in base64 characters (new stores use 16 bytes). */
const MAX_SALT = 128;
const MIN_PASSPHRASE = 12;

/**
 * Reads `MCPLEX_SECRET_KEY`: 64 hex characters or base64 of 32 bytes are used as the key
 * itself; anything else is a passphrase (at least 12 characters) stretched with scrypt and a
 * per-store random salt. Returns `undefined` when the variable is unset or empty.
 */
export function keyFromEnv(value: string | undefined): KeySource | undefined {
  if (value === undefined || value.trim() === "") return undefined;
  const raw = rawKey(value.trim());
  if (raw !== undefined) return { kind: "raw", key: raw, origin: "MCPLEX_SECRET_KEY" };
  if (value.length < MIN_PASSPHRASE) {
    throw new SecretStoreError(
      "SECRET_KEY_INVALID",
      "MCPLEX_SECRET_KEY is too short to be a key or a passphrase",
      {
        hint: `use a passphrase of at least ${MIN_PASSPHRASE} characters, or 32 random bytes as 64 hex characters (openssl rand -hex 32)`,
      },
    );
  }
  return { kind: "passphrase", passphrase: value };
}

function rawKey(text: string): Buffer | undefined {
  if (/^[0-9a-fA-F]{64}$/.test(text)) return Buffer.from(text, "hex");
  if (/^[A-Za-z0-9+/_-]{43}=?$/.test(text)) {
    const bytes = Buffer.from(text, "base64");
    if (bytes.length === 32) return bytes;
  }
  return undefined;
}

/**
 * Reads a key file, refusing one that group or others can read (the key is the only thing
 * between the store and its plaintext). Returns `undefined` when the file does not exist.
 */
export async function readKeyFile(path: string): Promise<KeySource | undefined> {
  let found: RegularFileRead;
  try {
    found = await readRegularFile(path, 4096);
  } catch (error) {
    throw new SecretStoreError("SECRET_KEY_INVALID", `cannot read key file ${path}`, {}, { cause: error });
  }
  if (found.kind === "missing") return undefined;
  if (found.kind !== "read") {
    const problem =
      found.kind === "not-regular" ? "is not a regular file" : `is ${found.size} bytes, not a key`;
    throw new SecretStoreError("SECRET_KEY_INVALID", `key file ${path} ${problem}`, {
      hint: `replace it with the key file the store was written with`,
    });
  }
  if (process.platform !== "win32" && (found.mode & 0o077) !== 0) {
    const mode = (found.mode & 0o777).toString(8).padStart(3, "0");
    throw new SecretStoreError(
      "SECRET_KEY_INVALID",
      `key file ${path} is accessible by group or others (mode ${mode}); refusing to use it`,
      { hint: `run: chmod 600 ${path}` },
    );
  }
  const raw = rawKey(found.text.trim());
  if (raw === undefined) {
    throw new SecretStoreError("SECRET_KEY_INVALID", `key file ${path} does not hold a 32-byte key`, {
      hint: "it must hold 64 hex characters; restore the key file the store was written with",
    });
  }
  return { kind: "raw", key: raw, origin: path };
}

/** Creates a key file with a new random key (mode 0600, directory 0700); keeps one that appeared meanwhile. */
export async function createKeyFile(path: string): Promise<KeySource> {
  await mkdir(dirname(path), { recursive: true, mode: 0o700 });
  const key = randomBytes(32);
  try {
    await writeFile(path, `${key.toString("hex")}\n`, { mode: 0o600, flag: "wx" });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
    const existing = await readKeyFile(path);
    if (existing !== undefined) return existing;
  }
  return { kind: "raw", key, origin: path };
}

/** A fresh derivation for a new store: scrypt with a new salt for passphrases, none for raw keys. */
export function newDerivation(source: KeySource): KeyDerivation {
  return source.kind === "raw"
    ? { name: "none" }
    : { name: "scrypt", salt: randomBytes(16).toString("base64"), ...SCRYPT };
}

/**
 * What is wrong with a store header's key derivation, or `undefined` when it can be run: a
 * derivation mcplex knows (`none`, `scrypt` with a salt), scrypt's N (a power of two), r and p at most the parameters mcplex writes ({@link SCRYPT}),
 * and a salt of reasonable length.
 */
export function derivationProblem(kdf: KeyDerivation): string | undefined {
  // The header was read from a file: its name may be anything.
  const name: unknown = kdf.name;
  if (name === "none") return undefined;
  if (name !== "scrypt" || kdf.name !== "scrypt")
    return `names an unknown key derivation ${JSON.stringify(name).slice(0, 60)}`;
  if (typeof kdf.salt !== "string") return "has a scrypt key derivation without a salt";
  const { N, r, p } = kdf;
  const bounded = (value: unknown, max: number) =>
    typeof value === "number" && Number.isSafeInteger(value) && value >= 1 && value <= max;
  const documented = `N=${SCRYPT.N}, r=${SCRYPT.r}, p=${SCRYPT.p}`;
  if (
    !bounded(N, SCRYPT.N) ||
    (N & (N - 1)) !== 0 ||
    N < 2 ||
    !bounded(r, SCRYPT.r) ||
    !bounded(p, SCRYPT.p)
  ) {
    const asked = `N=${JSON.stringify(N)}, r=${JSON.stringify(r)}, p=${JSON.stringify(p)}`.slice(0, 200);
    return `asks for scrypt parameters ${asked}; mcplex runs at most ${documented}`;
  }
  if (kdf.salt.length > MAX_SALT)
    return `has a scrypt salt of ${kdf.salt.length} characters; mcplex runs ${documented} with a salt of at most ${MAX_SALT}`;
  return undefined;
}

/** Derives the store keys from a key source and the derivation recorded in the store. */
export async function deriveKey(source: KeySource, kdf: KeyDerivation): Promise<StoreKey> {
  let master: Buffer;
  if (kdf.name === "none") {
    if (source.kind !== "raw") {
      throw new SecretStoreError(
        "SECRET_KEY_INVALID",
        "the secret store was written with a raw key, but MCPLEX_SECRET_KEY holds a passphrase",
        { hint: "set MCPLEX_SECRET_KEY to the 64-hex-character key, or unset it to use the key file" },
      );
    }
    master = source.key;
  } else {
    const secret = source.kind === "raw" ? source.key : source.passphrase;
    master = await scryptAsync(secret, Buffer.from(kdf.salt, "base64"), kdf);
  }
  const sub = (info: string, length: number) =>
    Buffer.from(hkdfSync("sha256", master, Buffer.alloc(0), info, length));
  const checkKey = sub("mcplex secrets v1 key check", 32);
  return {
    kdf,
    encryption: sub("mcplex secrets v1 encryption", 32),
    check: createHmac("sha256", checkKey).update("mcplex-secrets").digest().subarray(0, 16),
  };
}

function scryptAsync(
  secret: string | Buffer,
  salt: Buffer,
  p: { N: number; r: number; p: number },
): Promise<Buffer> {
  // The store checks the header first; this keeps any other caller within the same bound.
  const problem = derivationProblem({ name: "scrypt", salt: "", ...p });
  if (problem !== undefined)
    throw new SecretStoreError("SECRET_STORE_INVALID", `the secret store ${problem}`);
  return new Promise((resolve, reject) => {
    scrypt(
      secret,
      salt,
      32,
      { N: p.N, r: p.r, p: p.p, maxmem: 256 * p.N * p.r + 1024 * 1024 },
      (error, key) => (error === null ? resolve(key) : reject(error)),
    );
  });
}
