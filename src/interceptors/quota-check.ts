import { MemoryQuotaStore, QuotaExceededError, type QuotaStore, Quotas } from "../access/quotas.js";
import type { McplexConfig } from "../config/types.js";
import type { Interceptor, LayerDecision } from "../hub/call-pipeline.js";
import { interceptor } from "../hub/call-pipeline.js";

/** What {@link QuotaCheck} needs of the hub: a place on its path, and where decisions are counted. */
export interface QuotaHost {
  /** Puts a layer on the path of every call (`hub.use`); gives back what takes it off. */
  use(layer: Interceptor): () => void;
  /** Counts a decision (`hub.decided`: the gateway's metrics, `mcplex_decisions_total`). */
  decided(by: "quota", name: string, effect: string): void;
}

/**
 * `quotas:` on the hub's pipeline (every front's tool calls, the library's, `mcplex call` and
 * `chat`, and each inner call of code mode): a call over a quota is refused with
 * `QUOTA_EXCEEDED` and when to retry (`retryAt`; on the wire, a JSON-RPC error whose `data`
 * holds `code` and `retryAt`), and the refusal goes to the request's decisions (the audit
 * trail, the span) and the metrics. Counted in this process, or in Redis for every replica
 * when the hub was given the cluster's store. With no quota the layer is not on the path.
 */
export class QuotaCheck {
  readonly #hub: QuotaHost;
  readonly #store: QuotaStore;
  #remove: (() => void) | undefined;

  constructor(hub: QuotaHost, store: QuotaStore = new MemoryQuotaStore()) {
    this.#hub = hub;
    this.#store = store;
  }

  /** Takes a config's quotas (at start and on every reload): on the path while there are any. */
  configure(config: Pick<McplexConfig, "quotas">): void {
    const configs = config.quotas ?? [];
    const layer =
      configs.length === 0
        ? undefined
        : quotaLayer(new Quotas(configs, this.#store), (name) => this.#hub.decided("quota", name, "refused"));
    this.#remove?.();
    this.#remove = layer === undefined ? undefined : this.#hub.use(layer);
  }
}

/** The layer of one set of {@link Quotas}. */
export function quotaLayer(quotas: Quotas, refused: (quota: string) => void = () => {}): Interceptor {
  return interceptor({ needs: "raw" }, (next) => (request) => {
    const target = request.target;
    const tool = target?.kind === "tool" ? target.tool : undefined;
    if (request.method !== "tools/call" || tool === undefined) return next(request);
    const picked = quotas.picking(tool, request.context.profile);
    if (picked.length === 0) return next(request);
    // The caller as every limit keys it: issuer and subject of a sign-in, a static token, an
    // address; the library's and the CLI's calls are this machine's user.
    const principal = request.context.identity?.key ?? "local";
    return quotas.admit(picked, principal).then(
      async (lease) => {
        try {
          return await next(request);
        } finally {
          lease.release();
        }
      },
      (error: unknown) => {
        if (error instanceof QuotaExceededError) {
          const decision: LayerDecision = {
            by: "quota",
            name: error.quota,
            effect: "refused",
            detail: error.message,
            phase: "request",
            target: tool.name,
          };
          const context = request.context;
          if (context.decisions === undefined) context.decisions = [decision];
          else context.decisions.push(decision);
          refused(error.quota);
        }
        throw error;
      },
    );
  });
}
