/**
 * Writes docs/benchmarks.svg: added p50 latency (against direct, µs, log scale) by calls in
 * flight, one line per target, one panel per front. Hand-written SVG, no chart library.
 */
import { writeFileSync } from "node:fs";
import { CONCURRENCY } from "./measure.js";
import { type FrontResult, summarize } from "./summary.js";

export const CHART = new URL("../../docs/benchmarks.svg", import.meta.url).pathname;

interface LineStyle {
  color?: string;
  dash?: string;
  width?: number;
}

const STYLE: Record<string, LineStyle> = {
  relay: { color: "#7f7f7f", dash: "6 4" },
  sdk: { color: "#1f77b4" },
  mcplex: { color: "#d62728", width: 3.5 },
  supergateway: { color: "#2ca02c" },
  "mcp-proxy": { color: "#9467bd" },
};
const LEGEND: Record<string, string> = { relay: "byte relay", sdk: "SDK v2 proxy", mcplex: "mcplex" };
const FALLBACK = ["#8c564b", "#e377c2", "#17becf", "#bcbd22"];

const PANEL = { w: 420, h: 300, top: 80, left: 74, gap: 40 };
const W = 2 * (PANEL.left + PANEL.w) + PANEL.gap;
/** Values under this are drawn at it (a log axis has no zero; a relay can add ~nothing). */
const FLOOR = 1;

const esc = (s: string) => s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");

interface Line {
  id: string;
  label: string;
  points: (number | undefined)[];
}

function lines(front: FrontResult): Line[] {
  return summarize(front)
    .filter((r) => r.spec.role !== "direct")
    .map((r) => ({
      id: r.spec.id,
      label: r.spec.label,
      points: CONCURRENCY.map((c) => r.at.get(c)?.addedP50?.median),
    }));
}

/** Every decade, with 2 and 5 between when there are few decades. */
function ticks(lo: number, hi: number): number[] {
  const steps = Math.log10(hi / lo) > 3 ? [1] : [1, 2, 5];
  const out: number[] = [];
  for (let decade = lo; decade <= hi; decade *= 10)
    for (const m of steps) if (decade * m >= lo && decade * m <= hi) out.push(decade * m);
  return out;
}

const tickLabel = (v: number) => (v >= 1000 ? `${v / 1000} ms` : `${v} µs`);

function panel(title: string, data: Line[], x0: number, color: (id: string, i: number) => string): string {
  const values = data
    .flatMap((l) => l.points.filter((p): p is number => p !== undefined))
    .map((v) => Math.max(FLOOR, v));
  const lo = 10 ** Math.floor(Math.log10(Math.min(...values, 10)));
  const hi = 10 ** Math.ceil(Math.log10(Math.max(...values, 100)));
  const y = (v: number) =>
    PANEL.top +
    PANEL.h -
    ((Math.log10(Math.max(FLOOR, v)) - Math.log10(lo)) / (Math.log10(hi) - Math.log10(lo))) * PANEL.h;
  const x = (i: number) => x0 + (i + 0.5) * (PANEL.w / CONCURRENCY.length);
  const parts = [
    `<text x="${x0 + PANEL.w / 2}" y="${PANEL.top - 10}" class="title">${esc(title)}</text>`,
    `<rect x="${x0}" y="${PANEL.top}" width="${PANEL.w}" height="${PANEL.h}" class="frame"/>`,
  ];
  for (const t of ticks(lo, hi)) {
    parts.push(
      `<line x1="${x0}" x2="${x0 + PANEL.w}" y1="${y(t).toFixed(1)}" y2="${y(t).toFixed(1)}" class="grid"/>`,
    );
    parts.push(`<text x="${x0 - 6}" y="${(y(t) + 4).toFixed(1)}" class="ytick">${tickLabel(t)}</text>`);
  }
  CONCURRENCY.forEach((c, i) => {
    parts.push(`<text x="${x(i).toFixed(1)}" y="${PANEL.top + PANEL.h + 18}" class="xtick">${c}</text>`);
  });
  parts.push(
    `<text x="${x0 + PANEL.w / 2}" y="${PANEL.top + PANEL.h + 38}" class="axis">calls in flight</text>`,
  );
  data.forEach((l, i) => {
    const s: LineStyle = STYLE[l.id] ?? {};
    const stroke = color(l.id, i);
    const pts = l.points
      .map((p, k) => (p === undefined ? undefined : `${x(k).toFixed(1)},${y(p).toFixed(1)}`))
      .filter((p): p is string => p !== undefined);
    if (pts.length === 0) return;
    const dash = s.dash ? ` stroke-dasharray="${s.dash}"` : "";
    parts.push(
      `<polyline points="${pts.join(" ")}" fill="none" stroke="${stroke}" stroke-width="${s.width ?? 2}"${dash}/>`,
    );
    for (const p of pts) {
      const [px, py] = p.split(",");
      parts.push(`<circle cx="${px}" cy="${py}" r="3.5" fill="${stroke}"/>`);
    }
  });
  return parts.join("\n");
}

function legendEntry(x: number, y: number, id: string, label: string, stroke: string): string {
  const s: LineStyle = STYLE[id] ?? {};
  const dash = s.dash ? ` stroke-dasharray="${s.dash}"` : "";
  const line = `<line x1="${x}" x2="${x + 28}" y1="${y}" y2="${y}" stroke="${stroke}" stroke-width="${s.width ?? 2}"${dash}/>`;
  return `${line}<text x="${x + 34}" y="${y + 4}" class="legend">${esc(label)}</text>`;
}

/** The chart of `fronts` as an SVG document. */
export function renderChart(fronts: FrontResult[]): string {
  const all = fronts.map((f) => ({ front: f.front, lines: lines(f) }));
  // One legend entry per target, named for both fronts ("byte relay", not "TCP byte relay").
  const ids = [...new Map(all.flatMap((a) => a.lines).map((l) => [l.id, LEGEND[l.id] ?? l.label])).entries()];
  const color = (id: string, _i: number) =>
    STYLE[id]?.color ?? FALLBACK[ids.findIndex(([k]) => k === id) % FALLBACK.length]!;
  const legendY = PANEL.top + PANEL.h + 70;
  const height = legendY + 40;
  const titles = { stdio: "stdio", http: "Streamable HTTP" } as const;
  const body = all.map((a, i) =>
    panel(titles[a.front], a.lines, PANEL.left + i * (PANEL.w + PANEL.left + PANEL.gap), color),
  );
  let lx = PANEL.left - 30;
  const legend = ids.map(([id, label], i) => {
    const at = lx;
    lx += 50 + label.length * 7.5;
    return legendEntry(at, legendY, id, label, color(id, i));
  });
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${height}" viewBox="0 0 ${W} ${height}" font-family="Helvetica, Arial, sans-serif">`,
    "<style>",
    ".title{font-size:16px;font-weight:bold;text-anchor:middle}.frame{fill:#fff;stroke:#999}",
    ".grid{stroke:#e3e3e3}.ytick{font-size:11px;text-anchor:end;fill:#444}.xtick{font-size:12px;text-anchor:middle;fill:#444}",
    ".axis{font-size:12px;text-anchor:middle;fill:#222}.legend{font-size:13px;fill:#222}.head{font-size:17px;font-weight:bold}",
    ".note{font-size:11px;fill:#666}",
    "</style>",
    `<rect width="${W}" height="${height}" fill="#fff"/>`,
    `<text x="20" y="24" class="head">Added p50 latency against direct, by calls in flight (log scale)</text>`,
    `<text x="20" y="44" class="note">generated by npm run bench:compare (docs/benchmarks.md has the figures and their spread); added latency under ${FLOOR} µs is drawn at ${FLOOR} µs</text>`,
    ...body,
    ...legend,
    "</svg>",
    "",
  ].join("\n");
}

export function writeChart(fronts: FrontResult[]): void {
  writeFileSync(CHART, renderChart(fronts));
}
