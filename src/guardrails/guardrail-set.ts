import type { Catalog } from "../catalog/catalog.js";
import type { GuardrailConfig, McplexConfig } from "../config/types.js";
import type { Interceptor } from "../hub/call-pipeline.js";
import { type GuardrailCheck, guardrailLayer } from "./guardrail-layer.js";
import { injectionGuardrail } from "./injection-guardrail.js";
import { piiGuardrail } from "./pii-guardrail.js";
import { schemaGuardrail } from "./schema-guardrail.js";
import { secretsGuardrail } from "./secrets-guardrail.js";
import { sizeGuardrail } from "./size-guardrail.js";
import { webhookGuardrail } from "./webhook-guardrail.js";

/** What {@link Guardrails} needs of the hub: a place on its path, and where decisions are counted. */
export interface GuardrailHost {
  /** Puts a layer on the path of every call (`hub.use`); gives back what takes it off. */
  use(layer: Interceptor): () => void;
  /** Where a listed tool's name is resolved (for the guardrails that read descriptions). */
  readonly catalog: Pick<Catalog, "resolveTool">;
  decided(by: "guardrail", name: string, effect: string): void;
}

/**
 * The config's `guardrails:` at work on the hub's path, each entry its own layer, in the order
 * written (the first outermost: it sees the arguments first and the result last). With none,
 * nothing is on the path.
 */
export class Guardrails {
  readonly #hub: GuardrailHost;
  #remove: Array<() => void> = [];

  constructor(hub: GuardrailHost) {
    this.#hub = hub;
  }

  /** Takes a config's guardrails (at start and on every reload), replacing those at work. */
  configure(config: Pick<McplexConfig, "guardrails">): void {
    const count = (name: string, effect: string) => this.#hub.decided("guardrail", name, effect);
    // Made before the old ones go: entries that cannot be made leave the old ones at work.
    const layers = (config.guardrails ?? []).map((entry) =>
      guardrailLayer(entry, checkOf(entry), count, this.#hub.catalog),
    );
    this.close();
    this.#remove = layers.map((layer) => this.#hub.use(layer));
  }

  /** Takes every guardrail off the path. */
  close(): void {
    for (const remove of this.#remove) remove();
    this.#remove = [];
  }
}

function checkOf(entry: GuardrailConfig): GuardrailCheck {
  switch (entry.guardrail) {
    case "size":
      return sizeGuardrail(entry);
    case "schema":
      return schemaGuardrail();
    case "pii":
      return piiGuardrail(entry);
    case "secrets":
      return secretsGuardrail(entry);
    case "injection":
      return injectionGuardrail();
    case "webhook":
      return webhookGuardrail(entry);
  }
}
