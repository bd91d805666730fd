const LOOPBACK = /^(?:localhost|127(?:\.\d{1,3}){3}|\[::1\])$/i;

/**
 * Why a URL mcplex sends to (a remote server, a package registry, a guardrail service) is
 * refused: not a URL, not `https:` (`http:` only to this machine), or carrying a user name or
 * password.
 */
export function remoteUrlProblem(url: string): string | undefined {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return "it is not a URL";
  }
  if (parsed.protocol === "http:" && !LOOPBACK.test(parsed.hostname))
    return "http: is only for this machine (localhost, 127.0.0.1, [::1]); a remote must be https:";
  if (parsed.protocol !== "https:" && parsed.protocol !== "http:") return "a remote must be https:";
  if (parsed.username !== "" || parsed.password !== "") return "it carries a user name or password";
  return undefined;
}
