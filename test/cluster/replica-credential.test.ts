import type { IncomingMessage } from "node:http";
import { describe, expect, it } from "vitest";
import { REPLICA_HEADER, ReplicaCredentials } from "../../src/cluster/replica-credential.js";
import { deriveKey, SignedIds } from "../../src/cluster/signed-ids.js";

// What the checks remember (to spare an HMAC per request) must never widen what they accept.

const key = deriveKey("credential-test-secret-0123456789abcdefgh", "replica-credential");
const request = (credential: string, method = "POST", url = "/mcp") =>
  ({ method, url, headers: { [REPLICA_HEADER]: credential } }) as unknown as IncomingMessage;

describe("ReplicaCredentials", () => {
  it("sends one credential again for a few seconds, then mints a new one", () => {
    const r1 = new ReplicaCredentials(key, "r1");
    const t = 1_800_000_000_000;
    const first = r1.mint("POST", "/mcp", t);
    expect(r1.mint("POST", "/mcp", t + 4_000)).toBe(first);
    expect(r1.mint("GET", "/mcp", t + 4_000)).not.toBe(first);
    expect(r1.mint("POST", "/mcp", t + 6_000)).not.toBe(first);
  });

  it("accepts a valid credential from memory only while it is in date, for its own method and path", () => {
    const sender = new ReplicaCredentials(key, "r1");
    const receiver = new ReplicaCredentials(key, "r2");
    const t = 1_800_000_000_000;
    const credential = sender.mint("POST", "/mcp", t);
    expect(receiver.check(request(credential), t + 10)).toBe(true);
    // Remembered now: still bound to its method and path, and still out of date after a minute.
    expect(receiver.check(request(credential), t + 20)).toBe(true);
    expect(receiver.check(request(credential, "DELETE"), t + 20)).toBe("forged");
    expect(receiver.check(request(credential, "POST", "/mcp?x"), t + 20)).toBe("forged");
    expect(receiver.check(request(credential), t + 61_000)).toBe("forged");
    expect(receiver.check(request(credential), t + 20)).toBe(true);
    const altered = `${credential.slice(0, -2)}${credential.endsWith("AA") ? "BB" : "AA"}`;
    expect(receiver.check(request(altered), t + 20)).toBe("forged");
    expect(
      new ReplicaCredentials(
        deriveKey("another-secret-0123456789abcdefghijkl", "replica-credential"),
        "r2",
      ).check(request(credential), t),
    ).toBe("forged");
    expect(receiver.check({ method: "POST", url: "/mcp", headers: {} } as unknown as IncomingMessage)).toBe(
      false,
    );
  });
});

describe("SignedIds", () => {
  it("tells the owner of an id it checked before from memory, and still refuses a forged one", () => {
    const ids = new SignedIds(deriveKey("credential-test-secret-0123456789abcdefgh", "session-id"));
    const id = ids.mint("r1");
    expect(ids.owner(id)).toBe("r1");
    expect(ids.owner(id)).toBe("r1");
    expect(ids.owner(id.replace(/^r1\./, "r2."))).toBeUndefined();
    expect(ids.owner(`${id.slice(0, -2)}${id.endsWith("AA") ? "BB" : "AA"}`)).toBeUndefined();
    const other = new SignedIds(deriveKey("another-secret-0123456789abcdefghijkl", "session-id"));
    expect(other.owner(id)).toBeUndefined();
  });
});
