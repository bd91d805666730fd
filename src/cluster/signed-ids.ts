import { createHmac, hkdfSync, randomBytes, timingSafeEqual } from "node:crypto";

/** Bytes of randomness in an id: not guessable. */
const NONCE_BYTES = 16;
/** Bytes of the HMAC kept in an id (128 bits: forging one is out of reach). */
const MAC_BYTES = 16;
const OWNER = /^[A-Za-z0-9_-]{1,64}$/;
/** Checked ids remembered (about 100 bytes each). */
const CHECKED_IDS = 10_000;

/**
 * A key for one purpose, derived from the cluster secret (HKDF-SHA256), so a session-id key
 * never signs request states or replica credentials.
 */
export function deriveKey(secret: string, purpose: string): Buffer {
  return Buffer.from(hkdfSync("sha256", secret, "mcplex-cluster", purpose, 32));
}

/** HMAC-SHA256 of `text` under `key`, cut to `bytes`. */
export function mac(key: Buffer, text: string, bytes = 32): Buffer {
  return createHmac("sha256", key).update(text).digest().subarray(0, bytes);
}

/** Whether `given` (base64url) is the MAC of `text` under `key`, compared in constant time. */
export function macMatches(key: Buffer, text: string, given: string, bytes = 32): boolean {
  const expected = mac(key, text, bytes);
  const actual = Buffer.from(given, "base64url");
  return actual.length === expected.length && timingSafeEqual(actual, expected);
}

/**
 * Ids that name their owner and carry an HMAC: `<owner>.<nonce>.<mac>`, e.g. a 2025 session id
 * minted by replica `r1`. Any replica holding the key tells the owner of an id, and refuses
 * one it did not mint, without asking anyone.
 *
 * @example
 * const ids = new SignedIds(deriveKey(secret, "session-id"));
 * const id = ids.mint("r1");
 * ids.owner(id); // "r1"
 * ids.owner(id.slice(0, -2) + "xx"); // undefined
 */
export class SignedIds {
  readonly #key: Buffer;
  /**
   * Ids already checked, with their owner: a session's every request names its id, and an
   * HMAC per request was a tenth of a forwarded request's cost. Only ids that passed are kept
   * (a forged one is checked each time), oldest out first past {@link CHECKED_IDS}.
   */
  readonly #checked = new Map<string, string>();

  constructor(key: Buffer) {
    this.#key = key;
  }

  mint(owner: string): string {
    const body = `${owner}.${randomBytes(NONCE_BYTES).toString("base64url")}`;
    return `${body}.${mac(this.#key, body, MAC_BYTES).toString("base64url")}`;
  }

  /** The owner an id names, or `undefined` when the id was not minted with this key. */
  owner(id: string): string | undefined {
    const known = this.#checked.get(id);
    if (known !== undefined) return known;
    const dot = id.lastIndexOf(".");
    if (dot === -1) return undefined;
    const body = id.slice(0, dot);
    const owner = body.slice(0, body.indexOf("."));
    if (!OWNER.test(owner) || !macMatches(this.#key, body, id.slice(dot + 1), MAC_BYTES)) return undefined;
    if (this.#checked.size >= CHECKED_IDS) this.#checked.delete(this.#checked.keys().next().value!);
    this.#checked.set(id, owner);
    return owner;
  }
}
