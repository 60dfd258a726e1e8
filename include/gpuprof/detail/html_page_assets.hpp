// gpuprof/detail/html_page_assets.hpp: the HTML report's script and style,
// made from html_page.js and html_page.css by cmake/gpuprofEmbedHtmlAssets.cmake.
// Do not edit: edit those files, then `cmake --build BUILD --target gpuprof_html_assets`
// (the test gpuprof_html_assets_in_sync fails while this file is stale).
#pragma once
#include "../config.hpp"

GPUPROF_NAMESPACE_BEGIN

namespace detail {

inline const char* html_page_script() {
  return R"gpuprof_asset(// The HTML report's script (report/html.hpp). The page is whole without it:
// every table, the icicle chart and the pictures are static markup. This
// adds three things: sorting a table by a column, zooming the icicle chart
// into a scope (which also shows that scope's kernels), and a histogram of
// each scope's samples drawn from the bins its row carries (data-bins).
// Embedded through html_page_assets.hpp (cmake/gpuprofEmbedHtmlAssets.cmake).
"use strict";
window.addEventListener("error", (e) => { document.body.dataset.renderError = String(e.message); });
(function () {
  document.body.classList.add("scripted");
  const SVG = "http://www.w3.org/2000/svg";
  const make = (tag, attrs, ...children) => {
    const node = tag.startsWith("svg:") ? document.createElementNS(SVG, tag.slice(4)) : document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) node.setAttribute(k, v);
    for (const c of children) node.append(c instanceof Node ? c : document.createTextNode(String(c)));
    return node;
  };

  // --- sorting: click a column heading; again to reverse -----------------------
  // A cell sorts by its data-sort value where it has one (the scope column's
  // tree order), else by its text: as numbers when every filled cell is one.
  const sortValue = (cell) => cell.dataset.sort !== undefined ? cell.dataset.sort : cell.textContent.trim();
  document.querySelectorAll("table.sortable").forEach((table) => {
    const body = table.tBodies[0];
    if (body.rows.length === 0) return;
    table.querySelectorAll("thead th").forEach((th, column) => {
      th.classList.add("sort");
      th.title = "sort by this column";
      th.addEventListener("click", () => {
        const rows = [...body.rows];
        const values = rows.map((r) => sortValue(r.cells[column]));
        const numeric = values.every((v) => v === "" || v === "-" || isFinite(Number(v)));
        // First click: text and tree order ascending, numbers largest first.
        const natural = !numeric || body.rows[0].cells[column].dataset.sort !== undefined;
        const ascending = th.getAttribute("aria-sort") === null ? natural : th.getAttribute("aria-sort") === "descending";
        const key = (v) => numeric ? (v === "" || v === "-" ? -Infinity : Number(v)) : v;
        const order = rows.map((r, i) => [key(values[i]), r]).sort((a, b) =>
          (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0) * (ascending ? 1 : -1));
        table.querySelectorAll("thead th").forEach((other) => other.removeAttribute("aria-sort"));
        th.setAttribute("aria-sort", ascending ? "ascending" : "descending");
        body.append(...order.map((pair) => pair[1]));
      });
    });
  });

  // --- distributions: a histogram per scope row ------------------------------------
  // data-bins="linear|log low high count...": equal-width bins over [low, high] ms,
  // in time or in log(time). Any bin with samples is at least 2 px high.
  const statistics = document.getElementById("statistics");
  if (statistics) {
    statistics.tHead.rows[0].append(make("th", { class: "name" }, "distribution"));
    for (const row of statistics.tBodies[0].rows) {
      const cell = make("td", { class: "name" });
      row.append(cell);
      if (!row.dataset.bins) continue;
      const [scale, ...numbers] = row.dataset.bins.split(" ");
      const [low, high, ...counts] = numbers.map(Number);
      const edge = (i) => scale === "log" ? low * Math.pow(high / low, i / counts.length) : low + (high - low) * i / counts.length;
      const most = Math.max(...counts, 1), w = 120, h = 16, step = w / counts.length;
      const svg = make("svg:svg", { class: "histogram", width: w, height: h, viewBox: `0 0 ${w} ${h}` });
      svg.append(make("svg:title", {}, `${counts.reduce((a, b) => a + b, 0)} samples, ${low.toPrecision(4)} to ${high.toPrecision(4)} ms` +
        (scale === "log" ? " (bins equal in log time)" : "")));
      counts.forEach((count, i) => {
        const height = count === 0 ? 0 : Math.max(2, h * count / most);
        const bar = make("svg:rect", { x: i * step, y: h - height, width: Math.max(step - 1, 1), height, fill: "#4e79a7" });
        bar.append(make("svg:title", {}, `${edge(i).toPrecision(4)}–${edge(i + 1).toPrecision(4)} ms: ${count} sample(s)`));
        svg.append(bar);
      });
      cell.append(svg);
    }
  }

  // --- zoom: click a scope to spread it over the chart; click it again for all ----
  // The zoomed scope's path is the page's fragment (report.html#step/forward),
  // so a link can open the page zoomed.
  const chart = document.getElementById("flame");
  if (chart) {
    const groups = [...chart.querySelectorAll("g.flame")];
    const byNode = new Map(groups.map((g) => [Number(g.dataset.node), g]));
    const width = Number(chart.getAttribute("width"));
    const parentOf = (i) => Number(byNode.get(i).dataset.parent);
    const within = (node, ancestor) => { for (let n = node; n >= 0; n = parentOf(n)) if (n === ancestor) return true; return false; };
    const kernelSections = [...document.querySelectorAll(".kernels[data-node]")];
    const noKernels = document.getElementById("no-kernels");
    let zoomed = -1;
    const show = (focus) => {
      zoomed = focus;
      const x0 = focus < 0 ? 0 : Number(byNode.get(focus).dataset.x);
      const scale = focus < 0 ? 1 : width / Number(byNode.get(focus).dataset.w);
      for (const g of groups) {
        const node = Number(g.dataset.node);
        const inside = focus < 0 || within(node, focus), above = !inside && within(focus, node);
        g.style.display = inside || above ? "" : "none";
        const x = above ? 0 : (Number(g.dataset.x) - x0) * scale, w = above ? width : Number(g.dataset.w) * scale;
        const rect = g.querySelector("rect"), label = g.querySelector("text");
        rect.setAttribute("x", x);
        rect.setAttribute("width", Math.max(w, 0.5));
        rect.classList.toggle("selected", node === focus);
        const name = g.dataset.name;
        label.setAttribute("x", x + 4);
        label.textContent = w <= 40 ? "" : name.length * 6.5 > w - 8 ? name.slice(0, Math.max(1, Math.floor((w - 8) / 6.5) - 1)) + "…" : name;
      }
      let shown = 0;
      for (const section of kernelSections) {
        const mine = Number(section.dataset.node) === focus;
        section.hidden = !mine;
        if (mine) { shown += 1; if (section.tagName === "DETAILS") section.open = true; }
      }
      if (noKernels) {
        noKernels.hidden = shown > 0;
        noKernels.textContent = focus < 0 ? "" : `No GPU activities inside ${byNode.get(focus).dataset.path}.`;
      }
    };
    for (const g of groups) g.addEventListener("click", () => {
      const node = Number(g.dataset.node);
      show(node === zoomed ? -1 : node);
      history.replaceState(null, "", zoomed < 0 ? location.pathname : "#" + encodeURI(g.dataset.path));
    });
    let fragment = "";
    try { fragment = decodeURI(location.hash.slice(1)); } catch (e) { /* a malformed link zooms nowhere */ }
    const linked = groups.find((g) => g.dataset.path === fragment);
    show(linked ? Number(linked.dataset.node) : -1);
  }
  document.body.dataset.renderStatus = "ok";
})();
)gpuprof_asset";
}

inline const char* html_page_style() {
  return R"gpuprof_asset(/* The HTML report's style (report/html.hpp), embedded through html_page_assets.hpp. */
body { font: 14px/1.4 system-ui, sans-serif; margin: 1.5em; color: #1d2330; background: #fff; }
h1 { font-size: 1.4em; margin: 0 0 .3em; } h2 { font-size: 1.15em; margin: 1.6em 0 .5em; } h3 { font-size: 1em; }
.muted { color: #667; } .warn { color: #a33; }
table { border-collapse: collapse; font-variant-numeric: tabular-nums; }
th, td { padding: 2px 8px; border-bottom: 1px solid #e4e6eb; text-align: right; white-space: nowrap; }
th { background: #f3f4f7; position: sticky; top: 0; } td.name, th.name { text-align: left; }
th.sort { cursor: pointer; } th[aria-sort=ascending]::after { content: " \25B2"; } th[aria-sort=descending]::after { content: " \25BC"; }
table.env td { text-align: left; } table.env td:first-child { color: #667; }
svg text { font: 11px system-ui, sans-serif; pointer-events: none; }
.flame { cursor: pointer; } .flame-node { stroke: #fff; stroke-width: 1; }
.flame-node.selected { stroke: #000; stroke-width: 2; }
.histogram { vertical-align: middle; }
details.kernels { margin: .6em 0; } details.kernels summary { cursor: pointer; }
.bar { display: flex; height: 18px; width: 640px; border: 1px solid #ccd; margin: .4em 0; }
.legend span { display: inline-block; margin-right: 1em; } .swatch { display: inline-block; width: 10px; height: 10px; margin-right: 4px; }
/* Hints about clicking, shown only where the script runs to act on them. */
.with-script { display: none; } body.scripted .with-script { display: inline; }
)gpuprof_asset";
}

}  // namespace detail

GPUPROF_NAMESPACE_END
