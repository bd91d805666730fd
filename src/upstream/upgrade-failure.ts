// What a refused or cut-off WebSocket upgrade looks like, apart from the transport: reading it must
// not load `ws` (connect.ts asks every failed start, whatever its transport).

/** The HTTP answer of a server (or a proxy) that did not switch protocols. */
export class UpgradeRefusedError extends Error {
  /** Read by `httpStatus()` like the SDK's HTTP errors. */
  readonly status: number;
  readonly statusText: string;
  constructor(status: number, statusText: string) {
    super(`HTTP ${status}${statusText === "" ? "" : ` ${statusText}`}`);
    this.name = "UpgradeRefusedError";
    this.status = status;
    this.statusText = statusText;
  }
}

/** Socket errors that mean the upgrade was cut off on the way (a proxy reset it), not a host that is down. */
const CUT_OFF = new Set(["ECONNRESET", "EPIPE", "ECONNABORTED"]);

/**
 * Why a WebSocket start failed at the upgrade, e.g. `websocket upgrade refused: 502 Bad Gateway`
 * or `websocket upgrade blocked: connection reset (socket hang up)`; `undefined` when it failed
 * otherwise (nothing listening, a timeout, a handshake error after the upgrade).
 */
export function upgradeFailure(error: unknown): string | undefined {
  for (let at = error, depth = 0; at instanceof Error && depth < 6; at = at.cause, depth++) {
    if (at instanceof UpgradeRefusedError)
      return `websocket upgrade refused: ${at.status}${at.statusText === "" ? "" : ` ${at.statusText}`}`;
    const code = (at as NodeJS.ErrnoException).code;
    if (code !== undefined && CUT_OFF.has(code))
      return `websocket upgrade blocked: connection reset (${at.message})`;
  }
  return undefined;
}
