import type { QuotaStore } from "../access/quotas.js";
import type { CatalogTool } from "../catalog/types.js";
import type { McplexConfig } from "../config/types.js";
import type { Guardrails } from "../guardrails/guardrail-set.js";
import type { Interceptor } from "../hub/call-pipeline.js";
import { Hub } from "../hub/hub.js";
import type { HubOptions } from "../hub/hub-types.js";
import type { PolicyCheck } from "../interceptors/policy-check.js";
import type { QuotaCheck } from "../interceptors/quota-check.js";
import type { ToolPins } from "../pins/tool-pins.js";
import type { Telemetry } from "./telemetry.js";

/** What {@link buildHub} is given. */
export interface BuildHubOptions {
  config: McplexConfig;
  /** The hub's options besides those made here: capabilities, OAuth, tool cache, per-user credentials. */
  hub?: Omit<HubOptions, "config" | "pins" | "interceptors" | "upstreamInterceptors">;
  /** Layers on the path of every call, after the config's `interceptors:` modules. */
  interceptors?: readonly Interceptor[];
  /** When on, each request to a server is a span of its own. */
  telemetry?: Telemetry;
  /** A server's recording (`record:`) that stopped. */
  onRecordFailed: (server: string, error: Error) => void;
  /** Where `quotas:` are counted: the cluster's Redis for every replica; this process when absent. */
  quotaStore?: QuotaStore;
}

/** A hub {@link buildHub} made, not started. */
export interface BuiltHub {
  hub: Hub;
  /** The pinned servers' approvals (`pin:`), when a server is pinned. */
  pins?: ToolPins;
  /** Stops the recording of servers' traffic; after the hub closes. */
  closeRecorder(): void;
  /**
   * Takes a (reloaded) config's `policies:` and `auth.require`, its `guardrails:` and `quotas:`: their
   * layers on the hub's path while there are any, loaded with the first.
   */
  setRules(config: McplexConfig): Promise<void>;
  /**
   * Whether a policy denies `tool` to this machine's user whatever the arguments, so that a list
   * made outside the pipeline (the tools `mcplex chat` offers) leaves it out.
   */
  hides(tool: CatalogTool, profile?: string): boolean;
}

/**
 * The hub of a config, as `mcplex serve` and the commands that call servers (`call`, `list`,
 * `chat`, ...) alike make it: with the config's `interceptors:` modules, its policies (`policies:`
 * and `auth.require`) and guardrails, the recording of servers with `record:`, the pinned servers' lock file, and
 * tracing when telemetry is on. Each of these is loaded only when the config asks for it. The hub
 * is not started.
 */
export async function buildHub(options: BuildHubOptions): Promise<BuiltHub> {
  const { config, telemetry } = options;
  const recorder = config.servers.some((s) => s.record !== undefined)
    ? (await import("../interceptors/traffic-recorder.js")).recorderFor(config, options.onRecordFailed)
    : undefined;
  const modules =
    config.interceptors === undefined
      ? undefined
      : await (await import("../hub/interceptor-modules.js")).loadInterceptorModules(config.interceptors);
  // Pinned servers only: their lock file, read before any server lists.
  const pins = [...config.servers, ...(config.available ?? [])].some(
    (s) => s.pin !== undefined && s.pin !== "off",
  )
    ? await (await import("../pins/open-pins.js")).openPins(config)
    : undefined;
  const hub = new Hub({
    ...options.hub,
    config,
    ...(pins === undefined ? {} : { pins }),
    interceptors: [...(modules?.interceptors ?? []), ...(options.interceptors ?? [])],
    upstreamInterceptors: [
      ...(telemetry === undefined ? [] : [telemetry.upstream]),
      ...(recorder === undefined ? [] : [recorder.interceptor]),
      ...(modules?.upstreamInterceptors ?? []),
    ],
  });
  recorder?.attach(hub);
  let policies: PolicyCheck | undefined;
  let guardrails: Guardrails | undefined;
  let quotas: QuotaCheck | undefined;
  // In this order on every call, each layer put back on the path anew: policies outermost, then
  // guardrails, then quotas, so a call a rule or a guardrail refuses is never counted.
  const setRules = async (next: McplexConfig) => {
    if (
      policies === undefined &&
      ((next.policies ?? []).length > 0 || (next.auth?.require ?? []).length > 0)
    ) {
      const { PolicyCheck } = await import("../interceptors/policy-check.js");
      policies = new PolicyCheck(hub);
    }
    policies?.configure(next);
    if (guardrails === undefined && (next.guardrails ?? []).length > 0) {
      const { Guardrails } = await import("../guardrails/guardrail-set.js");
      guardrails = new Guardrails(hub);
    }
    guardrails?.configure(next);
    if (quotas === undefined && (next.quotas ?? []).length > 0) {
      const { QuotaCheck } = await import("../interceptors/quota-check.js");
      quotas = new QuotaCheck(hub, options.quotaStore);
    }
    quotas?.configure(next);
  };
  await setRules(config);
  return {
    hub,
    ...(pins === undefined ? {} : { pins }),
    closeRecorder: () => recorder?.close(),
    setRules,
    hides: (tool, profile) => policies?.hides(tool, profile === undefined ? {} : { profile }) ?? false,
  };
}
