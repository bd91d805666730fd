/** What the gateway says about itself. */
export interface GatewayIdentity {
  name: string;
  version: string;
  instructions?: string;
}
