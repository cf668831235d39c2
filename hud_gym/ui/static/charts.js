// hud-gym ui: SVG charts (bars and lines) with axes, tick values, a value on each point and an
// empty state. Labels go in as text nodes, never as markup.
"use strict";

const SVG_NS = "http://www.w3.org/2000/svg";
const CHART = { width: 640, height: 230, left: 48, right: 16, top: 16, bottom: 54 };
const PALETTE = ["#3b6fc4", "#d9822b", "#2e9e5b", "#b3261e", "#8e24aa", "#00897b", "#6d4c41", "#546e7a"];

function svgEl(tag, attrs, ...children) {
  const node = document.createElementNS(SVG_NS, tag);
  for (const [k, v] of Object.entries(attrs || {})) if (v !== null && v !== undefined) node.setAttribute(k, String(v));
  for (const child of children.flat()) {
    if (child === null || child === undefined) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

const short = (text, n = 14) => (text.length > n ? `${text.slice(0, n - 1)}…` : text);

// options: {kind: "bar" | "line", labels: [x label], series: [{name, values: [number|null]}],
//           yMax, format(v) -> text, xTitle, yTitle, empty: text shown when there is nothing to plot}
function chart(options) {
  const { kind = "bar", labels = [], series = [], format = (v) => String(v), xTitle = "", yTitle = "" } = options;
  const values = series.flatMap((s) => s.values).filter((v) => v !== null && v !== undefined);
  if (!labels.length || !values.length) {
    return el("div", { class: "chart-empty", "data-chart": options.id || "" }, options.empty || "nothing to plot yet");
  }
  const { width, height, left, right, top, bottom } = CHART;
  const yMax = options.yMax ?? Math.max(1, ...values);
  const plotW = width - left - right, plotH = height - top - bottom;
  const y = (v) => top + plotH - (plotH * v) / (yMax || 1);
  const slot = plotW / labels.length;
  const x = (i) => left + slot * (i + 0.5);
  const parts = [];
  for (let k = 0; k <= 4; k += 1) { // y axis: grid lines and tick values
    const v = (yMax * k) / 4;
    parts.push(svgEl("line", { x1: left, x2: width - right, y1: y(v), y2: y(v), class: "grid" }),
      svgEl("text", { x: left - 6, y: y(v) + 4, class: "tick y-tick", "text-anchor": "end" }, format(v)));
  }
  parts.push(svgEl("line", { x1: left, x2: left, y1: top, y2: top + plotH, class: "axis axis-y" }),
    svgEl("line", { x1: left, x2: width - right, y1: top + plotH, y2: top + plotH, class: "axis axis-x" }));
  labels.forEach((label, i) => parts.push(svgEl("g", {}, svgEl("title", {}, label),
    svgEl("text", { x: x(i), y: top + plotH + 16, class: "tick x-tick", "text-anchor": "middle" }, short(String(label), Math.max(4, Math.floor(slot / 7)))))));
  series.forEach((s, n) => {
    const color = PALETTE[n % PALETTE.length];
    if (kind === "bar") {
      const barW = Math.max(2, (slot * 0.8) / series.length);
      s.values.forEach((v, i) => {
        if (v === null || v === undefined) return;
        const bx = x(i) - (slot * 0.8) / 2 + barW * n;
        parts.push(svgEl("rect", { x: bx, y: y(v), width: barW - 1, height: Math.max(0, top + plotH - y(v)), fill: color, class: "bar" },
          svgEl("title", {}, `${labels[i]}: ${format(v)}`)),
        svgEl("text", { x: bx + barW / 2, y: y(v) - 3, class: "value", "text-anchor": "middle" }, format(v)));
      });
    } else {
      let path = "";
      s.values.forEach((v, i) => {
        if (v === null || v === undefined) { path += " "; return; } // an absent figure breaks the line
        path += `${path.endsWith(" ") || !path ? "M" : "L"}${x(i)},${y(v)}`;
      });
      parts.push(svgEl("path", { d: path.trim().replace(/\s+/g, " "), stroke: color, fill: "none", class: "line" }));
      s.values.forEach((v, i) => {
        if (v === null || v === undefined) return;
        parts.push(svgEl("circle", { cx: x(i), cy: y(v), r: 3.5, fill: color, class: "point" }, svgEl("title", {}, `${s.name} at ${labels[i]}: ${format(v)}`)),
          svgEl("text", { x: x(i), y: y(v) - 7, class: "value", "text-anchor": "middle", fill: color }, format(v)));
      });
    }
  });
  if (xTitle) parts.push(svgEl("text", { x: left + plotW / 2, y: height - 8, class: "axis-title", "text-anchor": "middle" }, xTitle));
  if (yTitle) parts.push(svgEl("text", { x: 12, y: top + plotH / 2, class: "axis-title", "text-anchor": "middle", transform: `rotate(-90 12 ${top + plotH / 2})` }, yTitle));
  const legend = series.length > 1 ? el("div", { class: "legend" }, series.map((s, n) =>
    el("span", {}, el("i", { style: { background: PALETTE[n % PALETTE.length] } }), s.name))) : null;
  return el("figure", { class: "chart", "data-chart": options.id || "" },
    svgEl("svg", { viewBox: `0 0 ${width} ${height}`, role: "img", "aria-label": options.title || yTitle }, parts), legend);
}
