import { type DpopAlg, type DpopKeyPair, generateDpopKeyPair } from "@modelcontextprotocol/client";
import { calculateJwkThumbprint, exportJWK, importJWK, type JWK } from "jose";

/**
 * A server's DPoP key pair as kept in its OAuth record (beside the tokens bound to it): the
 * private JWK, so the record is as secret as the tokens. The CLI's store seals it (the secret
 * store), a cluster's Redis store seals it too; it is never written or logged in the clear.
 */
export interface DpopKeyRecord {
  alg: DpopAlg;
  /** The private key as a JWK (with `d`); the public half is derived from it. */
  privateJwk: JWK;
}

/** The members of a JWK that are private (RFC 7517/7518), left out of the public half. */
const PRIVATE_MEMBERS = ["d", "p", "q", "dp", "dq", "qi", "oth", "k"];

/** A new DPoP key pair (ES256 by default), and its record for the store. */
export async function createDpopKey(
  alg: DpopAlg = "ES256",
): Promise<{ keyPair: DpopKeyPair; record: DpopKeyRecord }> {
  // Extractable once, to be sealed in the store; the pair used for proofs is re-imported from it.
  const generated = await generateDpopKeyPair({ alg, extractable: true });
  const record: DpopKeyRecord = { alg, privateJwk: await exportJWK(generated.privateKey) };
  return { keyPair: await openDpopKey(record), record };
}

/** The key pair of a stored {@link DpopKeyRecord}; its private key is not extractable. */
export async function openDpopKey(record: DpopKeyRecord): Promise<DpopKeyPair> {
  const publicJwk: JWK = Object.fromEntries(
    Object.entries(record.privateJwk).filter(
      ([key]) => !PRIVATE_MEMBERS.includes(key) && key !== "key_ops" && key !== "ext",
    ),
  );
  const [privateKey, publicKey, thumbprint] = await Promise.all([
    importJWK(record.privateJwk, record.alg, { extractable: false }),
    importJWK(publicJwk, record.alg),
    calculateJwkThumbprint(publicJwk, "sha256"),
  ]);
  if (privateKey instanceof Uint8Array || publicKey instanceof Uint8Array) {
    throw new Error("the stored DPoP key is not an asymmetric key");
  }
  return { privateKey, publicKey, publicJwk, thumbprint, alg: record.alg };
}
