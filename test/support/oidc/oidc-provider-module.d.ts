/**
 * The part of `oidc-provider` (9.x, plain JavaScript, no bundled types; `@types/oidc-provider` is
 * not installed) that the test authorization server uses. Only what is called is declared.
 */
declare module "oidc-provider" {
  import type { IncomingMessage, ServerResponse } from "node:http";

  /** An interaction session: what the authorization endpoint asks the end-user to resolve. */
  export interface Interaction {
    uid: string;
    prompt: { name: string; reasons: string[]; details: Record<string, unknown> };
    params: Record<string, unknown> & { client_id: string; scope?: string };
    session?: { accountId?: string };
    grantId?: string;
  }

  /** A grant: what an end-user allowed a client, saved by the consent step. */
  export interface Grant {
    addOIDCScope(scope: string): void;
    addOIDCClaims(claims: string[]): void;
    addResourceScope(resource: string, scope: string): void;
    save(): Promise<string>;
  }

  /** The `oidc-provider` authorization server (a Koa application). */
  export class Provider {
    constructor(issuer: string, configuration?: Record<string, unknown>);
    /** Koa's switch for its own logging of 5xx errors. */
    silent: boolean;
    readonly issuer: string;
    readonly Grant: {
      new (properties: { accountId: string; clientId: string }): Grant;
      find(id: string): Promise<Grant | undefined>;
    };
    callback(): (req: IncomingMessage, res: ServerResponse) => void;
    interactionDetails(req: IncomingMessage, res: ServerResponse): Promise<Interaction>;
    interactionFinished(
      req: IncomingMessage,
      res: ServerResponse,
      result: Record<string, unknown>,
      options?: { mergeWithLastSubmission?: boolean },
    ): Promise<void>;
    on(event: string, listener: (...args: unknown[]) => void): this;
    /** Adds a grant type to the token endpoint (and to `grant_types_supported`). */
    registerGrantType(
      name: string,
      handler: (ctx: never) => Promise<void>,
      parameters?: string[],
      duplicates?: string[],
    ): void;
    /** Opaque access tokens the provider stored (JWT ones are not looked up this way). */
    readonly AccessToken: {
      find(
        value: string,
      ): Promise<{ accountId?: string; clientId?: string; aud?: string | string[] } | undefined>;
    };
  }

  /** Errors the configuration hooks throw to answer an OAuth error. */
  export const errors: {
    InvalidTarget: new (description?: string) => Error;
    AccessDenied: new (description?: string) => Error;
    InvalidRequest: new (description?: string) => Error;
    InvalidScope: new (description: string, scope: string) => Error;
    UnauthorizedClient: new (description?: string) => Error;
    /** Any OAuth error code with a description (oidc-provider's `invalid_grant` hides its own). */
    CustomOIDCProviderError: new (
      error: string,
      description: string,
    ) => Error;
  };

  export default Provider;
}
