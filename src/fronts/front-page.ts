import type { IncomingMessage, ServerResponse } from "node:http";
import type { Gateway } from "../gateway/gateway.js";
import type { Identity } from "./authenticator.js";
import type { AdmissionRefusal } from "./caller.js";

/** What the HTTP front lends a page it serves (the dashboard): its admission and what it serves. */
export interface FrontPageHost {
  /**
   * Host/Origin and credential checks of a data request, through the front's `Authenticator`:
   * the caller's profile, operator rights and identity, or a refusal. With `limited`, the
   * caller's rate limit too (actions).
   */
  admit(
    req: IncomingMessage,
    limited?: boolean,
  ): Promise<{ profile?: string; operator: boolean; identity?: Identity } | AdmissionRefusal>;
  /** Host/Origin check alone, for a page's own files (they hold no data). */
  checkPage(req: IncomingMessage): AdmissionRefusal | undefined;
  /** The endpoints the front serves, to show on the page. */
  endpoints(): { mcp: string; ws?: string };
  /** Whether the front asks for credentials. */
  authenticated(): boolean;
  /** One replica of several: the cluster's members and health (as in `/readyz`). */
  cluster?: () => unknown;
  /** Whether the front serves MCP (`/mcp`, `/ws`) beside the page. */
  readonly mcp: boolean;
}

/**
 * A web page the HTTP front serves under a path of its own, beside MCP: the front answers what
 * it does not own and lends it admission; the page answers the rest. The dashboard is one, made
 * by whoever starts the front (`serve()`), so the front never imports it.
 */
export interface FrontPage {
  /** Whether `path` is the page's (its own path and below). */
  owns(path: string): boolean;
  handle(req: IncomingMessage, res: ServerResponse, path: string): Promise<void> | void;
  /** Ends its streams when the front closes. */
  close(): void;
}

/** Makes a page for a front: `path` is where it is served (e.g. `/dashboard`). */
export interface FrontPageFactory {
  readonly path: string;
  create(gateway: Gateway, host: FrontPageHost): FrontPage;
}
