/** How long a token lives in a cache when the provider gives no `expires_in` and no JWT `exp`. */
const UNKNOWN_LIFETIME_MS = 60_000;

/** Milliseconds the exchanged token lives: `expires_in`, else the JWT's `exp`, else a minute. */
export function lifetimeOf(expiresIn: number | undefined, token: string, now: number): number {
  if (typeof expiresIn === "number" && expiresIn > 0) return expiresIn * 1000;
  const payload = token.split(".")[1];
  if (payload !== undefined) {
    try {
      // Read only to know how long to keep it: the server checks the signature, not mcplex.
      const { exp } = JSON.parse(Buffer.from(payload, "base64url").toString("utf8")) as { exp?: unknown };
      if (typeof exp === "number") return Math.max(0, exp * 1000 - now);
    } catch {
      // Not a JWT: an opaque token, kept for the default lifetime.
    }
  }
  return UNKNOWN_LIFETIME_MS;
}
