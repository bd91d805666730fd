// Resources: the catalog's resources and templates, read through the gateway's /mcp, with a
// preview of text and images.

import { resourceContents } from "./content-view.js";
import { el } from "./dom.js";

/** Mounts the #resources-panel section. Returns `{ refresh, open(uri) }`. */
export function mountResourceBrowser(client) {
  const $ = (id) => document.getElementById(id);
  const body = $("rs-list").tBodies[0];
  const preview = $("rs-preview");
  const uriInput = $("rs-uri");

  const open = async (uri) => {
    uriInput.value = uri;
    preview.replaceChildren(el("p", { class: "muted" }, `reading ${uri}…`));
    try {
      const result = await client.request("resources/read", { uri });
      preview.replaceChildren(...resourceContents(result.contents));
      preview.setAttribute("data-uri", uri);
    } catch (error) {
      preview.replaceChildren(el("p", { class: "error", role: "alert" }, error.message));
    }
  };

  $("rs-read").addEventListener("submit", (event) => {
    event.preventDefault();
    if (uriInput.value.trim() !== "") open(uriInput.value.trim());
  });

  return {
    open,
    async refresh() {
      const [resources, templates] = await Promise.all([
        client.listAll("resources/list", "resources"),
        client.listAll("resources/templates/list", "resourceTemplates"),
      ]);
      const rows = resources.map((r) => {
        const read = el("button", { type: "button", class: "small" }, "read");
        read.addEventListener("click", () => open(r.uri));
        return el(
          "tr",
          { "data-uri": r.uri },
          el("td", { class: "name" }, r.title ?? r.name ?? ""),
          el("td", {}, el("code", {}, r.uri)),
          el("td", {}, r.mimeType ?? ""),
          el("td", {}, read),
        );
      });
      const templateRows = templates.map((t) => {
        const fill = el("button", { type: "button", class: "small" }, "use");
        fill.addEventListener("click", () => {
          uriInput.value = t.uriTemplate;
          uriInput.focus();
        });
        return el(
          "tr",
          { class: "template", "data-template": t.uriTemplate },
          el("td", { class: "name" }, t.title ?? t.name ?? ""),
          el("td", {}, el("code", {}, t.uriTemplate)),
          el("td", {}, t.mimeType ?? ""),
          el("td", {}, fill),
        );
      });
      const all = [...rows, ...templateRows];
      body.replaceChildren(
        ...(all.length > 0 ? all : [el("tr", { class: "empty" }, el("td", { colspan: 4 }, "no resources"))]),
      );
      $("rs-count").textContent = `(${resources.length} resources, ${templates.length} templates)`;
    },
  };
}
