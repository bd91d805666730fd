// What decides and shapes calls (`policies:`, `auth.require`, `guardrails:`, `quotas:`,
// servers' `overrides:`), for the operator, and the decisions each call met.
import { badge, el } from "./dom.js";

const selectorText = (entry) =>
  [
    entry.servers === undefined ? "" : `servers ${entry.servers.join(", ")}`,
    entry.tools === undefined ? "" : `tools ${entry.tools.join(", ")}`,
    entry.profiles === undefined ? "" : `profiles ${entry.profiles.join(", ")}`,
  ]
    .filter((part) => part !== "")
    .join("; ") || "every call";

/**
 * Fills the "Rules in force" section from `rules` (`/dashboard/state`'s, operators only), or
 * hides it when there are none to show.
 */
export function renderRules(rules) {
  const section = document.getElementById("rules-section");
  const rows = [];
  for (const p of rules?.policies ?? [])
    rows.push(
      el(
        "tr",
        { "data-rule": `policy:${p.name}` },
        el("td", {}, "policy"),
        el("td", { class: "name" }, p.name),
        el("td", {}, badge(p.effect)),
        el("td", { class: "detail" }, el("code", {}, p.when), p.phase === "response" ? " (on results)" : ""),
      ),
    );
  for (const r of rules?.requires ?? [])
    rows.push(
      el(
        "tr",
        { "data-rule": "require" },
        el("td", {}, "auth.require"),
        el("td", { class: "name" }, ""),
        el("td", {}, badge("require")),
        el("td", { class: "detail" }, `${r.selects} need ${r.scopes.join(" ")}`),
      ),
    );
  for (const g of rules?.guardrails ?? [])
    rows.push(
      el(
        "tr",
        { "data-rule": `guardrail:${g.guardrail}` },
        el("td", {}, "guardrail"),
        el("td", { class: "name" }, g.guardrail),
        el("td", {}, badge(g.mode)),
        el("td", { class: "detail" }, `${selectorText(g)}; ${g.phase}${g.failOpen ? "; fails open" : ""}`),
      ),
    );
  for (const q of rules?.quotas ?? [])
    rows.push(
      el(
        "tr",
        { "data-rule": `quota:${q.name}` },
        el("td", {}, "quota"),
        el("td", { class: "name" }, q.name),
        el("td", {}, badge(q.per === "all" ? "for all" : "per caller")),
        el("td", { class: "detail" }, `${q.limit}; ${selectorText(q)}`),
      ),
    );
  for (const o of rules?.overrides ?? [])
    rows.push(
      el(
        "tr",
        { "data-rule": `overrides:${o.server}` },
        el("td", {}, "overrides"),
        el("td", { class: "name" }, o.server),
        el("td", {}, ""),
        el("td", { class: "detail" }, `${o.entries} ${o.entries === 1 ? "entry" : "entries"}`),
      ),
    );
  section.hidden = rows.length === 0;
  document.querySelector("#rules tbody").replaceChildren(...rows);
}

/** A call's decisions as short badges: `policy no-secrets deny`, `quota reads refused`. */
export function decisionsView(decisions) {
  if (decisions === undefined || decisions.length === 0) return "";
  return el(
    "span",
    { class: "decisions" },
    ...decisions.map((d) =>
      el("span", { class: "decision", title: d.detail ?? "" }, `${d.by} ${d.name} `, badge(d.effect)),
    ),
  );
}
