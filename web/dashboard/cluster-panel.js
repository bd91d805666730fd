// The cluster's members and health, when this gateway is one replica of several (`cluster:`).
import { badge, el } from "./dom.js";

/**
 * Fills the Cluster section from `cluster` (`/dashboard/state`'s, as `/readyz` has it), or hides
 * it when the gateway is on its own.
 */
export function renderCluster(cluster) {
  const section = document.getElementById("cluster-section");
  section.hidden = cluster === undefined;
  if (cluster === undefined) return;
  document
    .getElementById("cluster-status")
    .replaceWith(Object.assign(badge(cluster.status), { id: "cluster-status" }));
  document.getElementById("cluster-redis").textContent = `Redis ${cluster.redis}`;
  document
    .getElementById("cluster-warnings")
    .replaceChildren(...(cluster.warnings ?? []).map((warning) => el("li", { class: "error" }, warning)));
  const rows = cluster.members.map((member) =>
    el(
      "tr",
      { "data-replica": member.id },
      el("td", {}, member.id, member.self === true ? el("span", { class: "muted" }, " (this one)") : ""),
      el("td", {}, member.advertise),
      el(
        "td",
        {},
        member.sameConfig === false ? badge("different config", "degraded") : badge("same config", "ok"),
      ),
    ),
  );
  document.querySelector("#cluster tbody").replaceChildren(...rows);
}
