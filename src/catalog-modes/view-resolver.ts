import type { CatalogMode, ModeSettings } from "./catalog-mode.js";
import { CatalogView, type ViewEngines } from "./catalog-view.js";

/** Where modes are set, from the least to the most specific caller's own choice. */
export interface ModeTable {
  /** Callers whose token, front and profile set no mode. Default `all`. */
  default?: Partial<ModeSettings>;
  /** By profile name: `mode` and `pin` of `profiles.NAME`. */
  profiles?: Readonly<Record<string, Partial<ModeSettings>>>;
}

/** What a caller brings: its profile, and the mode its token or front chose. */
export interface ModeCaller {
  profile?: string | undefined;
  mode?: CatalogMode | undefined;
}

/**
 * The view a caller sees the catalog through, or `undefined` in `all` mode (the catalog as it
 * is, with no layer in the way). The caller's own mode (token, then front) wins over its
 * profile's, which wins over the default; the pins come from the profile, else the default.
 * `modes` may be a function, read at each request, for a table that changes (a reloaded config).
 * One view per mode and pin list, made on first use.
 *
 * @example
 * const viewOf = viewResolver({ default: { mode: "search", pin: ["workspace__*"] } }, engines);
 * viewOf({ profile: "agent" })?.listTools(hub.tools("agent"));
 */
export function viewResolver(
  modes: ModeTable | (() => ModeTable),
  engines: ViewEngines,
): (caller: ModeCaller) => CatalogView | undefined {
  const views = new Map<string, CatalogView>();
  return (caller) => {
    const table = typeof modes === "function" ? modes() : modes;
    const profile = caller.profile === undefined ? undefined : table.profiles?.[caller.profile];
    const mode = caller.mode ?? profile?.mode ?? table.default?.mode ?? "all";
    if (mode === "all") return undefined;
    const pin = profile?.pin ?? table.default?.pin ?? [];
    const key = `${mode}\0${pin.join("\0")}`;
    let view = views.get(key);
    if (view === undefined) {
      view = new CatalogView({ mode, pin }, engines);
      views.set(key, view);
    }
    return view;
  };
}
