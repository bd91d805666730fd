import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { OAuthConfig } from "../../src/config/types.js";
import { McplexError } from "../../src/errors.js";
import { authorizeServer, memoryOAuthStore, ServerOAuthProvider } from "../../src/upstream/oauth.js";
import {
  type AssertionGrantServer,
  CLIENTS,
  startAssertionGrantServer,
} from "../support/assertion-grant-server.js";

/**
 * What the assertion grants do when the other side refuses, or hands back something hostile:
 * a refusal is final (one token request, no retry, no other grant), it names the server, the
 * party that refused and the fix, and it never carries the assertion or the ID token, even
 * when the refusing server echoes them in its error description. A token command's output is
 * data: on failure it is not quoted.
 */

let auth: AssertionGrantServer;
let dir: string;

beforeAll(async () => {
  auth = await startAssertionGrantServer();
  dir = await mkdtemp(join(tmpdir(), "mcplex-assertion-hostile-"));
});

afterEach(() => {
  auth.refuseGrant(undefined);
  auth.refuseExchange(undefined);
});

afterAll(async () => {
  await auth?.close();
  await rm(dir, { recursive: true, force: true });
});

const BASE = { redirectUrl: "http://127.0.0.1:1/callback", clientName: "mcplex" } as const;

async function authorize(config: OAuthConfig): Promise<McplexError> {
  const provider = new ServerOAuthProvider("api", config, { store: memoryOAuthStore() });
  const error = await authorizeServer(provider, new URL(auth.mcpUrl)).then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!(error instanceof McplexError)) throw new Error(`expected an McplexError, got ${String(error)}`);
  return error;
}

function everything(error: McplexError): string {
  return `${error.message}\n${error.hint ?? ""}\n${JSON.stringify(error)}`;
}

describe("a refused JWT-bearer grant", () => {
  for (const code of ["invalid_grant", "invalid_scope", "unauthorized_client"]) {
    it(`${code}: asked once, named, and never echoing the assertion`, async () => {
      const jwt = await auth.workloadJwt();
      const file = join(dir, `${code}.jwt`);
      await writeFile(file, jwt);
      auth.refuseGrant({ error: code, echo: true });
      const before = auth.tokenRequests.length;

      const error = await authorize({ ...BASE, grant: "jwt-bearer", assertion: { file } });

      expect(error.code).toBe("OAUTH_GRANT_REFUSED");
      expect(error.server).toBe("api");
      expect(error.message).toContain(`refused the workload's JWT (JWT-bearer grant): ${code}`);
      expect(error.message).toContain(auth.issuer);
      expect(error.hint).toBeDefined();
      expect(everything(error)).not.toContain(jwt);
      // One request, of the JWT-bearer grant: no retry, no fallback to another grant.
      expect(auth.tokenRequests.slice(before).map((r) => r.grant)).toEqual([
        "urn:ietf:params:oauth:grant-type:jwt-bearer",
      ]);
    });
  }

  it("does not quote the output of a token command that fails", async () => {
    const jwt = await auth.workloadJwt();
    const script = `process.stdout.write(${JSON.stringify(jwt)}); process.stderr.write("metadata server down"); process.exit(3)`;
    const error = await authorize({
      ...BASE,
      grant: "jwt-bearer",
      assertion: { command: [process.execPath, "-e", script] },
    });
    expect(error.code).toBe("OAUTH_ASSERTION_UNAVAILABLE");
    expect(error.message).toContain("exited with code 3: metadata server down");
    expect(everything(error)).not.toContain(jwt);
  });

  it("does not run what a token file holds, nor what a command prints", async () => {
    const marker = join(dir, "ran");
    const file = join(dir, "shell.jwt");
    await writeFile(file, `$(touch ${marker}); \`touch ${marker}\``);
    const before = auth.tokenRequests.length;
    await authorize({ ...BASE, grant: "jwt-bearer", assertion: { file } });
    await authorize({ ...BASE, grant: "jwt-bearer", assertion: { command: ["cat", file] } });
    const sent = auth.tokenRequests.slice(before).map((r) => r.assertion);
    expect(sent).toEqual([
      `$(touch ${marker}); \`touch ${marker}\``,
      `$(touch ${marker}); \`touch ${marker}\``,
    ]);
    await expect(import("node:fs/promises").then((fs) => fs.access(marker))).rejects.toThrow();
  });
});

describe("a refused ID-JAG", () => {
  const config = (file: string): OAuthConfig => ({
    ...BASE,
    grant: "id-jag",
    clientId: CLIENTS.as.id,
    clientSecret: CLIENTS.as.secret,
    idJag: {
      tokenEndpoint: auth.idpTokenEndpoint,
      clientId: CLIENTS.idp.id,
      clientSecret: CLIENTS.idp.secret,
      idToken: { file },
    },
  });

  it("names the identity provider when the exchange is refused, without the ID token", async () => {
    const idToken = await auth.idToken("mallory@example.com");
    const file = join(dir, "mallory.id-token");
    await writeFile(file, idToken);
    auth.refuseExchange({ error: "invalid_grant", echo: true });
    const before = auth.tokenRequests.length;

    const error = await authorize(config(file));

    expect(error.code).toBe("OAUTH_GRANT_REFUSED");
    expect(error.message).toContain(`the identity provider ${auth.idpTokenEndpoint} refused`);
    expect(error.message).toContain("invalid_grant");
    expect(everything(error)).not.toContain(idToken);
    expect(auth.tokenRequests.length).toBe(before);
  });

  it("names the authorization server when the grant is refused, without the ID-JAG", async () => {
    const file = join(dir, "trent.id-token");
    await writeFile(file, await auth.idToken("trent@example.com"));
    auth.refuseGrant({ error: "invalid_grant", echo: true });
    const before = auth.tokenRequests.length;

    const error = await authorize(config(file));

    expect(error.message).toContain(`the authorization server ${auth.issuer} refused the ID-JAG`);
    const requests = auth.tokenRequests.slice(before);
    expect(requests).toHaveLength(1);
    expect(everything(error)).not.toContain(requests[0]?.assertion);
  });
});
