// One small SVG chart for every chart on the page: lines with a dot per point, over a fixed
// x range (so an idle stretch shows as a gap in time, not a squeezed line).

const SVG = "http://www.w3.org/2000/svg";

function svg(tag, attributes = {}, text) {
  const node = document.createElementNS(SVG, tag);
  for (const [name, value] of Object.entries(attributes)) node.setAttribute(name, String(value));
  if (text !== undefined) node.textContent = text;
  return node;
}

/**
 * An `<svg>` drawing each series as a line with a dot (`circle.point`) per point.
 * `series`: `[{ name, className, points: [{ x, y, label }] }]`; x in `[xMin, xMax]`, y from 0
 * to the largest y (or `yMax`). Each dot has a `<title>` with its label, shown on hover.
 *
 * @example
 * host.append(sparkline([{ name: "p95", className: "p95", points }], { xMin: start, xMax: now }));
 */
export function sparkline(series, { width = 320, height = 64, xMin, xMax, yMax, unit = "" } = {}) {
  const pad = { left: 4, right: 4, top: 12, bottom: 4 };
  const all = series.flatMap((s) => s.points);
  const top = yMax ?? Math.max(1, ...all.map((p) => p.y));
  const x0 = xMin ?? Math.min(...all.map((p) => p.x));
  const x1 = xMax ?? Math.max(...all.map((p) => p.x));
  const sx = (x) => pad.left + ((x - x0) / Math.max(1, x1 - x0)) * (width - pad.left - pad.right);
  const sy = (y) => height - pad.bottom - (y / top) * (height - pad.top - pad.bottom);
  const root = svg("svg", {
    class: "sparkline",
    width,
    height,
    viewBox: `0 0 ${width} ${height}`,
    role: "img",
    "aria-label": series.map((s) => `${s.name}: ${s.points.length} points`).join(", "),
  });
  root.append(
    svg("line", { class: "axis", x1: pad.left, x2: width - pad.right, y1: sy(0), y2: sy(0) }),
    svg("text", { class: "scale", x: pad.left, y: 10 }, `${formatNumber(top)}${unit}`),
  );
  for (const s of series) {
    const group = svg("g", { class: `series ${s.className ?? ""}`, "data-series": s.name });
    if (s.points.length > 1)
      group.append(
        svg("polyline", {
          points: s.points.map((p) => `${sx(p.x).toFixed(1)},${sy(p.y).toFixed(1)}`).join(" "),
        }),
      );
    for (const p of s.points) {
      const dot = svg("circle", { class: "point", cx: sx(p.x).toFixed(1), cy: sy(p.y).toFixed(1), r: 2.5 });
      dot.append(svg("title", {}, p.label ?? `${s.name} ${formatNumber(p.y)}${unit}`));
      group.append(dot);
    }
    root.append(group);
  }
  return root;
}

function formatNumber(n) {
  return n >= 100 ? n.toFixed(0) : n.toFixed(1);
}
