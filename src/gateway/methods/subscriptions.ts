import { type MethodHandlers, requireString } from "./method-handler.js";

/**
 * 2025's `resources/subscribe` and `resources/unsubscribe`, through the hub to the resource's
 * server (the session keeps which URIs its client subscribed to; 2026's
 * `subscriptions/listen` is the session's own, see `listen-streams.ts`).
 */
export const SUBSCRIPTION_METHODS: MethodHandlers = {
  "resources/subscribe": async (request, { hub }) => {
    const profile = request.context.profile;
    await hub.subscribeResource(requireString(request.params, "uri"), {
      signal: request.callOptions.signal,
      ...(profile === undefined ? {} : { profile }),
    });
    return {};
  },
  "resources/unsubscribe": async (request, { hub }) => {
    const profile = request.context.profile;
    await hub.unsubscribeResource(
      requireString(request.params, "uri"),
      profile === undefined ? {} : { profile },
    );
    return {};
  },
};
