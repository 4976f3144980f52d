// The live charts (uPlot, vendored: /dashboard/uPlot.iife.min.js, global `uPlot`).

import { fmtBytes, fmtInt, fmtMicros, fmtRate, fmtTime, plural } from "./format.js";
import { state } from "./history.js";

const css = (name) => getComputedStyle(document.documentElement).getPropertyValue(name).trim();
const palette = () => ["--s1", "--s2", "--s3", "--s4", "--s5", "--s6"].map(css);

function chartSpec() {
  const h = state.history;
  const confirmations = [...state.confirmations.values()].sort((a, b) => a.index - b.index);
  const refusalKeys = [...h.refusals.keys()];
  return {
    blocks: {
      unit: (v) => fmtRate(v, "blk/s"),
      series: ["received", "referenced"],
      data: () => [h.t, h.received, h.referenced],
    },
    milestones: {
      unit: (v) => fmtInt(v),
      integer: true,
      // Indexes far from 0: the axis spans the window's own indexes.
      range: (min, max) => [Math.max((min || 0) - 2, 0), (max || 0) + 2],
      series: ["latest", "confirmed"],
      data: () => [h.t, h.latest, h.confirmed],
    },
    confirmation: {
      unit: fmtMicros,
      series: ["confirmation time"],
      points: true,
      data: () => [
        confirmations.map((c) => c.timestamp),
        confirmations.map((c) => c.confirmationUs),
      ],
    },
    tips: {
      unit: (v) => plural(v, "tip", "tips"),
      integer: true,
      series: ["healthy", "semi-lazy", "lazy"],
      data: () => [h.t, h.healthy, h.semiLazy, h.lazy],
    },
    resources: {
      unit: fmtBytes,
      series: ["resident memory", "data directory (right)"],
      // Memory and disk differ by orders of magnitude: the directory has its own axis.
      secondScale: true,
      data: () => [h.t, h.rss, h.dataDir],
    },
    refusals: {
      unit: (v) => fmtRate(v, "/s"),
      series: refusalKeys.length ? refusalKeys : ["none"],
      data: () =>
        refusalKeys.length
          ? [h.t, ...refusalKeys.map((k) => h.refusals.get(k))]
          : [h.t, h.t.map(() => 0)],
    },
  };
}

const charts = new Map(); // name -> {plot, seriesKey}

// A y range from 0 (or a negative minimum) to 15 % above the maximum, at least 1.
function headroom(min, max, integer) {
  const top = max > 0 ? max * 1.15 : 1;
  return [Math.min(0, min || 0), integer ? Math.max(Math.ceil(top), 1) : Math.max(top, 1)];
}

function plotSize(el) {
  const width = Math.max(el.clientWidth, 200);
  const height = window.matchMedia("(max-width: 640px)").matches ? 160 : 190;
  return { width, height };
}

function makePlot(name, spec) {
  const fig = document.getElementById(`chart-${name}`);
  const el = fig.querySelector(".plot");
  const colors = palette();
  const axis = {
    stroke: css("--muted"),
    grid: { stroke: css("--grid"), width: 1 },
    ticks: { stroke: css("--grid"), width: 1 },
  };
  // Whole numbers only on the axes of counts; 1-2-5 steps otherwise (uPlot's default).
  const integerIncrs = [1, 2, 5, 10, 20, 50, 100, 200, 500, 1e3, 2e3, 5e3, 1e4, 2e4, 5e4, 1e5, 1e6, 1e7];
  const yAxis = (scale, side) => ({
    ...axis,
    scale,
    side,
    size: 80,
    incrs: spec.integer ? integerIncrs : undefined,
    values: (u, vals) => vals.map((v) => spec.unit(v)),
  });
  const axes = [
    { ...axis, space: 80, values: (u, vals) => vals.map((v) => fmtTime(v).slice(0, 5 + (vals.length > 1 && vals[1] - vals[0] < 60 ? 3 : 0))) },
    yAxis("y", 3),
  ];
  if (spec.secondScale) axes.push({ ...yAxis("y2", 1), grid: { show: false } });
  const opts = {
    ...plotSize(el),
    scales: { x: { time: true }, y: { range: (u, min, max) => (spec.range ? spec.range(min, max) : headroom(min, max, spec.integer)) } },
    legend: { live: false },
    cursor: { drag: { x: false, y: false } },
    series: [
      {},
      ...spec.series.map((label, i) => ({
        label,
        scale: spec.secondScale && i === 1 ? "y2" : "y",
        stroke: colors[i % colors.length],
        width: 2,
        points: { show: Boolean(spec.points) },
        value: (u, v) => spec.unit(v),
      })),
    ],
    axes,
  };
  if (spec.secondScale) opts.scales.y2 = { range: (u, min, max) => headroom(min, max, false) };
  el.textContent = "";
  const plot = new uPlot(opts, spec.data(), el);
  charts.set(name, { plot, seriesKey: spec.series.join("\u0000") });
}

export function drawCharts(rebuild) {
  if (typeof uPlot === "undefined") return;
  const specs = chartSpec();
  for (const [name, spec] of Object.entries(specs)) {
    const current = charts.get(name);
    if (rebuild || !current || current.seriesKey !== spec.series.join("\u0000")) {
      if (current) current.plot.destroy();
      makePlot(name, spec);
    } else {
      current.plot.setData(spec.data());
    }
    const fig = document.getElementById(`chart-${name}`);
    fig.dataset.points = String(spec.data()[0].length);
  }
}

export function resizeCharts() {
  for (const [name, { plot }] of charts) {
    const el = document.getElementById(`chart-${name}`).querySelector(".plot");
    if (el.clientWidth > 0) plot.setSize(plotSize(el));
  }
}
