/** `host:port`, with an IPv6 host in brackets. */
export function hostPort(host: string, port: number): string {
  return `${host.includes(":") ? `[${host}]` : host}:${port}`;
}

/**
 * Why a front cannot listen on `host:port`, and what to do about it, for the errors people
 * meet (`serve` reports them, `doctor` checks for them); `undefined` for any other code.
 */
export function listenProblem(
  code: string | undefined,
  host: string,
  port: number,
): { problem: string; hint: string } | undefined {
  const at = hostPort(host, port);
  switch (code) {
    case "EADDRINUSE":
      return {
        problem: `${at} is already in use (another mcplex serve?)`,
        hint: `stop it, or choose another port with --port (e.g. --port ${port + 1})`,
      };
    case "EACCES":
      return {
        problem: `not allowed to listen on ${at}`,
        hint: "ports below 1024 need privileges: choose another with --port",
      };
    case "EADDRNOTAVAIL":
      return {
        problem: `${host} is not an address of this machine`,
        hint: "use one of its addresses, or 127.0.0.1",
      };
    default:
      return undefined;
  }
}
