import { createCipheriv, createDecipheriv, randomBytes } from "node:crypto";

/**
 * Text sealed with AES-256-GCM under `key` (32 bytes), bound to `boundTo` (associated data: what
 * the text belongs to, so that it cannot be moved to another place and still open), as one
 * base64 string: a fresh 12-byte IV, the 16-byte tag, the ciphertext. The credential vaults and
 * the shared OAuth store keep their records this way.
 */
export function sealText(key: Buffer, text: string, boundTo: Buffer): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv("aes-256-gcm", key, iv);
  cipher.setAAD(boundTo);
  const body = Buffer.concat([cipher.update(text, "utf8"), cipher.final()]);
  return Buffer.concat([iv, cipher.getAuthTag(), body]).toString("base64");
}

/**
 * The text {@link sealText} sealed. Throws when it was sealed under another key or bound to
 * something else, or was changed: the caller says what that means where it reads.
 */
export function openText(key: Buffer, sealed: string, boundTo: Buffer): string {
  const raw = Buffer.from(sealed, "base64");
  const decipher = createDecipheriv("aes-256-gcm", key, raw.subarray(0, 12));
  decipher.setAAD(boundTo);
  decipher.setAuthTag(raw.subarray(12, 28));
  return Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString("utf8");
}
