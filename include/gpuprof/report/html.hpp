// gpuprof/report/html.hpp: the report as one self-contained HTML page a
// person opens in a browser.
//
//   gpuprof::write_html(report, "report.html");   // or html_report(report)
//
// The page holds the report's JSON (report_json) and a small script of our
// own that draws it: no network, no CDN, no other file. Sections: where it
// ran (environment), the scope tree as an icicle chart sized by time (GPU
// time where the scope was GPU-timed, host time otherwise; click a scope to
// filter the kernel tables), the statistics table, the kernels of the chosen
// scope and their categories when kernels were captured, and the memory
// timeline (live allocations stacked over time, device memory in use, the
// largest allocations with the scope that made them) when the report has one,
// and with hardware counters their table and the roofline picture
// (roofline_svg.hpp, drawn here rather than by the script).
// Once drawn, <body> carries data-render-status="ok"; a script error sets
// data-render-error instead (tests/reports/html_browser_test.cmake reads both).
#pragma once
#include <string>

#include "../atomic_file.hpp"
#include "json.hpp"
#include "../detail/markup.hpp"
#include "roofline_svg.hpp"
#include "../report_model.hpp"

GPUPROF_NAMESPACE_BEGIN

namespace detail {

// '<' inside JSON can only occur in strings, where "\u003c" means the same:
// no "</script>" or "<!--" can end the data block early.
inline std::string json_for_script_element(const std::string& json) {
  std::string out;
  out.reserve(json.size());
  for (char c : json) {
    if (c == '<') out += "\\u003c";
    else out += c;
  }
  return out;
}

inline const char* html_report_style() {
  return R"CSS(
body { font: 14px/1.4 system-ui, sans-serif; margin: 1.5em; color: #1d2330; background: #fff; }
h1 { font-size: 1.4em; margin: 0 0 .3em; } h2 { font-size: 1.15em; margin: 1.6em 0 .5em; }
.muted { color: #667; } .warn { color: #a33; }
table { border-collapse: collapse; font-variant-numeric: tabular-nums; }
th, td { padding: 2px 8px; border-bottom: 1px solid #e4e6eb; text-align: right; white-space: nowrap; }
th { background: #f3f4f7; position: sticky; top: 0; } td.name, th.name { text-align: left; }
table.env td { text-align: left; } table.env td:first-child { color: #667; }
svg text { font: 11px system-ui, sans-serif; pointer-events: none; }
.flame-node { stroke: #fff; stroke-width: 1; cursor: pointer; }
.flame-node.selected { stroke: #000; stroke-width: 2; }
.bar { display: flex; height: 18px; width: 640px; border: 1px solid #ccd; }
.legend span { display: inline-block; margin-right: 1em; } .swatch { display: inline-block; width: 10px; height: 10px; margin-right: 4px; }
)CSS";
}

inline const char* html_report_script() {
  return R"JS(
"use strict";
window.addEventListener("error", (e) => { document.body.dataset.renderError = String(e.message); });
(function () {
  const report = JSON.parse(document.getElementById("gpuprof-data").textContent);
  const SVG = "http://www.w3.org/2000/svg";
  const main = document.getElementById("report");
  const make = (tag, attrs, ...children) => {
    const node = tag.startsWith("svg:") ? document.createElementNS(SVG, tag.slice(4)) : document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) node.setAttribute(k, v);
    for (const c of children) node.append(c instanceof Node ? c : document.createTextNode(String(c)));
    return node;
  };
  const fmt = (x, digits = 4) => (x === null || x === undefined || !isFinite(x)) ? "" : Number(x).toPrecision(digits);
  const mib = (bytes) => (bytes / 1048576).toFixed(1);
  const hue = (text) => { let h = 0; for (const ch of text) h = (h * 31 + ch.charCodeAt(0)) % 360; return h; };
  const categoryColour = { gemm: "#4e79a7", attention: "#f28e2b", softmax: "#e15759", norm: "#76b7b2",
    reduction: "#59a14f", elementwise: "#edc948", memory: "#b07aa1", communication: "#ff9da7", other: "#9c755f" };
  const table = (headers, rows, nameColumns = [0]) => {
    const t = make("table", {}, make("thead", {}, make("tr", {}, ...headers.map((h, i) =>
      make("th", nameColumns.includes(i) ? { class: "name" } : {}, h)))));
    const body = make("tbody");
    for (const row of rows) body.append(make("tr", {}, ...row.map((c, i) =>
      make("td", nameColumns.includes(i) ? { class: "name" } : {}, c))));
    t.append(body);
    return t;
  };
  const section = (title, ...content) => main.append(make("h2", {}, title), ...content);
  const nodes = report.nodes;
  const primary = (n) => n.gpu_ms || n.host_ms;

  // --- icicle chart of the scope tree -----------------------------------------
  const kernelSection = make("div");
  let selected = -1;
  const width = 1200, rowHeight = 22;
  const depth = nodes.reduce((d, n) => Math.max(d, n.depth + 1), 0);
  const chart = make("svg:svg", { id: "flame", width, height: Math.max(1, depth) * rowHeight, viewBox: `0 0 ${width} ${Math.max(1, depth) * rowHeight}` });
  const children = nodes.map(() => []);
  const roots = [];
  nodes.forEach((n, i) => (n.parent >= 0 ? children[n.parent] : roots).push(i));
  const layout = (indices, x0, available, scale) => {
    // Children may add up to more than their parent (several threads, mixed clocks): then they share its width.
    const sum = indices.reduce((s, i) => s + nodes[i].total_ms, 0);
    const k = sum * scale > available ? available / sum : scale;
    let x = x0;
    for (const i of indices) {
      const w = nodes[i].total_ms * k;
      const n = nodes[i];
      const rect = make("svg:rect", { class: "flame-node", "data-path": n.path, "data-node": i, x, y: n.depth * rowHeight,
        width: Math.max(w, 0.5), height: rowHeight - 1, fill: `hsl(${hue(n.name)}, 55%, 62%)` },
        make("svg:title", {}, `${n.path}\n${fmt(n.total_ms)} ms total (${n.timing}), ${n.count} call(s)` +
          (n.percent_of_parent !== null ? `, ${fmt(n.percent_of_parent, 3)}% of parent` : "")));
      rect.addEventListener("click", () => { selected = selected === i ? -1 : i; drawKernels(); });
      chart.append(rect);
      if (w > 40) chart.append(make("svg:text", { x: x + 4, y: n.depth * rowHeight + 15 }, n.name.length * 6.5 > w - 8 ? n.name.slice(0, Math.max(1, Math.floor((w - 8) / 6.5) - 1)) + "…" : n.name));
      layout(children[i], x, w, k);
      x += w;
    }
  };
  const rootSum = roots.reduce((s, i) => s + nodes[i].total_ms, 0);
  layout(roots, 0, width, rootSum > 0 ? width / rootSum : 0);
  section("Scopes", make("p", { class: "muted" }, "Width: total time of the scope (GPU time where GPU-timed, host time otherwise)." +
    (report.kernels.length > 0 ? " Click a scope to show its kernels." : "")), chart);

  // --- statistics table ---------------------------------------------------------
  const statRows = nodes.map((n) => {
    const s = primary(n);
    return ["\u00a0\u00a0".repeat(n.depth) + n.name, n.count, fmt(n.total_ms), fmt(s.mean), fmt(s.stddev), fmt(s.median),
      fmt(s.p90), fmt(s.min), fmt(s.max), n.percent_of_parent === null ? "" : fmt(n.percent_of_parent, 3),
      n.timing === "cuda_events" ? "GPU" : "host", n.peak_device_bytes === null ? "" : mib(n.peak_device_bytes),
      s.unstable ? s.unstable_reason : ""];
  });
  section("Statistics (ms)", table(["scope", "count", "total", "mean", "std", "median", "p90", "min", "max", "% parent",
    "clock", "peak MiB", "unstable"], statRows, [0, 12]));

  // --- hardware counters per scope (the roofline picture follows the page) -------
  if (report.counters && report.counters.scopes.length > 0) {
    const rows = nodes.filter((n) => n.counters).map((n) => {
      const c = n.counters, diff = (d) => d === null ? "" : (d > 0 ? "+" : "") + fmt(d, 3) + "%";
      return [n.path, c.dram_bytes === null ? "" : fmt(c.dram_bytes / 1e9), fmt(c.flops_per_byte), c.flop_per_s === null ? "" : fmt(c.flop_per_s / 1e12),
        fmt(c.percent_of_roof, 3), c.bound === "unknown" ? "" : c.bound, c.pipe, fmt(c.l2_hit_pct, 3), fmt(c.occupancy_pct, 3),
        diff(c.declared_flops_difference_pct), diff(c.declared_bytes_difference_pct), c.declared_work_flagged ? "over 20%" : ""];
    });
    section("Hardware counters", make("p", { class: "muted" }, `${report.counters.metrics.length} metric(s), ${report.counters.passes} replay pass(es)` +
      (report.counters.chip ? ` on ${report.counters.chip}` : "") + (report.counters.note ? `; ${report.counters.note}` : "")),
      table(["scope", "DRAM GB", "FLOP/B", "TFLOP/s", "% roof", "bound", "pipe", "L2 hit %", "occupancy %", "declared FLOPs", "declared bytes", "flag"], rows, [0, 5, 6, 11]));
  }

  // --- kernels per scope ----------------------------------------------------------
  const nodeOfInstance = new Map(report.instances.map((x) => [x.id, x.node]));
  const within = (node, ancestor) => { for (let n = node; n >= 0; n = nodes[n].parent) if (n === ancestor) return true; return false; };
  function drawKernels() {
    chart.querySelectorAll(".flame-node").forEach((r) => r.classList.toggle("selected", Number(r.dataset.node) === selected));
    kernelSection.replaceChildren();
    const kernels = report.kernels.filter((k) => selected < 0 ||
      (nodeOfInstance.has(k.scope_instance) && within(nodeOfInstance.get(k.scope_instance), selected)));
    kernelSection.append(make("p", { class: "muted" }, selected < 0 ? `All ${kernels.length} GPU activities.` :
      `${kernels.length} GPU activities launched inside ${nodes[selected].path}.`));
    const byName = new Map(), byCategory = new Map();
    let total = 0;
    for (const k of kernels) {
      const ms = k.duration_ns / 1e6;
      total += ms;
      if (!byName.has(k.name)) byName.set(k.name, { base: k.base_name || k.name, category: k.category, samples: [] });
      byName.get(k.name).samples.push(ms);
      byCategory.set(k.category, (byCategory.get(k.category) || 0) + ms);
    }
    const bar = make("div", { class: "bar" });
    const legend = make("div", { class: "legend" });
    for (const [category, ms] of [...byCategory].sort((a, b) => b[1] - a[1])) {
      const colour = categoryColour[category] || "#999";
      bar.append(make("div", { style: `width:${100 * ms / total}%;background:${colour}`, title: `${category}: ${fmt(ms)} ms` }));
      legend.append(make("span", {}, make("span", { class: "swatch", style: `background:${colour}` }), `${category} ${fmt(100 * ms / total, 3)}%`));
    }
    if (total > 0) kernelSection.append(bar, legend);
    const rows = [...byName.values()].map((k) => {
      const s = k.samples.slice().sort((a, b) => a - b), sum = s.reduce((a, b) => a + b, 0);
      return [fmt(100 * sum / total, 3), fmt(sum), s.length, fmt(sum / s.length), fmt(s[Math.floor((s.length - 1) / 2)]), fmt(s[0]), fmt(s[s.length - 1]), k.category, k.base];
    }).sort((a, b) => Number(b[1]) - Number(a[1]));
    kernelSection.append(table(["time %", "total ms", "instances", "avg ms", "med ms", "min ms", "max ms", "category", "name"], rows.slice(0, 200), [7, 8]));
  }
  if (report.kernels.length > 0) { section("Kernels", kernelSection); drawKernels(); }

  // --- memory timeline ------------------------------------------------------------
  const timeline = report.memory_timeline || { in_use: [], allocations: [] };
  if (timeline.in_use.length > 0 || timeline.allocations.length > 0) {
    const times = [...timeline.in_use.map((p) => p[0]), ...timeline.allocations.flatMap((a) => a.free_ns === null ? [a.alloc_ns] : [a.alloc_ns, a.free_ns])];
    const t0 = Math.min(...times), t1 = Math.max(...times, t0 + 1);
    const w = 1200, h = 320, left = 60, bottom = 20;
    const x = (t) => left + (t - t0) / (t1 - t0) * (w - left - 40);
    const axis = (svg, maxBytes, y) => {
      svg.append(make("svg:line", { x1: left, y1: h - bottom, x2: w - 40, y2: h - bottom, stroke: "#889" }));
      for (let i = 0; i <= 4; ++i) {
        const b = maxBytes * i / 4;
        svg.append(make("svg:text", { x: 2, y: y(b) + 4 }, mib(b) + " MiB"));
        svg.append(make("svg:text", { x: x(t0 + (t1 - t0) * i / 4) - 10, y: h - 4 }, fmt((t1 - t0) * i / 4 / 1e6, 3) + " ms"));
      }
    };
    const parts = [];
    if (timeline.allocations.length > 0) {
      // PyTorch's picture: live allocations stacked in allocation order; a free lets the ones above drop.
      const events = [];
      timeline.allocations.forEach((a, i) => { events.push([a.alloc_ns, 1, i]); events.push([a.free_ns === null ? t1 : a.free_ns, 0, i]); });
      events.sort((p, q) => p[0] - q[0] || p[1] - q[1]);
      const live = [], outline = timeline.allocations.map(() => []);
      // Scopes in order of first allocation, hues a golden angle apart so neighbours differ.
      const scopeColours = new Map();
      const scopeColour = (scope) => {
        if (!scopeColours.has(scope)) scopeColours.set(scope, scope ? `hsl(${(scopeColours.size * 137.5 + 190) % 360}, 55%, 58%)` : "#b8bcc6");
        return scopeColours.get(scope);
      };
      let peak = 0;
      for (const [t, isAlloc, i] of events) {
        let below = 0;
        if (isAlloc) live.push(i); else live.splice(live.indexOf(i), 1);
        for (const j of live) {
          const pts = outline[j];
          if (pts.length === 0 || pts[pts.length - 1][1] !== below) pts.push([t, below]);
          below += timeline.allocations[j].bytes;
        }
        if (!isAlloc) outline[i].push([t, null]);
        peak = Math.max(peak, below);
      }
      const y = (b) => h - bottom - b / Math.max(peak, 1) * (h - bottom - 10);
      const svg = make("svg:svg", { id: "memory-allocations", width: w, height: h, viewBox: `0 0 ${w} ${h}` });
      timeline.allocations.forEach((a, i) => {
        const pts = outline[i];
        const top = [], base = [];
        for (let k = 0; k < pts.length; ++k) {
          const [t, off] = pts[k];
          if (off === null) break;
          const next = k + 1 < pts.length ? pts[k + 1][0] : t1;
          base.push(`${x(t)},${y(off)}`, `${x(next)},${y(off)}`);
          top.push(`${x(t)},${y(off + a.bytes)}`, `${x(next)},${y(off + a.bytes)}`);
        }
        svg.append(make("svg:polygon", { class: "allocation", points: [...top, ...base.reverse()].join(" "),
          fill: scopeColour(a.scope), stroke: "#fff", "stroke-width": 0.5 },
          make("svg:title", {}, `${mib(a.bytes)} MiB by ${a.scope || "(no scope)"}`)));
      });
      axis(svg, peak, y);
      const legend = make("div", { class: "legend" });
      for (const [scope, colour] of scopeColours)
        legend.append(make("span", {}, make("span", { class: "swatch", style: `background:${colour}` }), scope || "(no scope)"));
      parts.push(make("p", { class: "muted" }, `Live allocations seen by kernel capture, stacked (peak ${mib(peak)} MiB of allocations). Colour: the scope that made them.`), svg, legend);
      const largest = timeline.allocations.slice().sort((a, b) => b.bytes - a.bytes).slice(0, 15);
      parts.push(make("h3", {}, "Largest allocations"), table(["MiB", "allocated at ms", "freed at ms", "scope"],
        largest.map((a) => [mib(a.bytes), fmt((a.alloc_ns - t0) / 1e6), a.free_ns === null ? "live" : fmt((a.free_ns - t0) / 1e6), a.scope || "(no scope)"]), [3]));
    }
    if (timeline.in_use.length > 0) {
      const peak = Math.max(...timeline.in_use.map((p) => p[1]), 1);
      const y = (b) => h - bottom - b / peak * (h - bottom - 10);
      const svg = make("svg:svg", { id: "memory-in-use", width: w, height: h, viewBox: `0 0 ${w} ${h}` });
      svg.append(make("svg:polyline", { points: timeline.in_use.map((p) => `${x(p[0])},${y(p[1])}`).join(" "), fill: "none", stroke: "#4e79a7", "stroke-width": 2 }));
      axis(svg, peak, y);
      parts.unshift(make("p", { class: "muted" }, `Device memory in use (whole device, cudaMemGetInfo) at scope boundaries; peak ${mib(peak)} MiB.`), svg);
    }
    section("Memory timeline", ...parts);
  }
  document.body.dataset.renderStatus = "ok";
})();
)JS";
}

// Where it ran, as the same labelled lines the markdown heading uses.
inline std::string html_environment_table(const Report& report) {
  auto lines = environment_lines(report.environment);
  if (report.environment.gpu_name.empty() && !report.device_name.empty())
    lines.insert(lines.begin(), {"GPU", report.device_name});
  lines.emplace_back("timing", std::string(timing_source_name(report.timing_source)) +
                                   (report.timing_note.empty() ? "" : " (" + report.timing_note + ")"));
  std::string table = "<table class=\"env\">\n";
  for (const auto& [label, value] : lines)
    table += "<tr><td>" + html_escaped(label) + "</td><td>" + html_escaped(value) + "</td></tr>\n";
  return table + "</table>\n";
}

}  // namespace detail

// The whole page as text.
inline std::string html_report(const Report& report, const std::string& title = "gpuprof report") {
  const std::string escaped_title = detail::html_escaped(title);
  std::string page = "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>";
  page += escaped_title;
  page += "</title>\n<style>";
  page += detail::html_report_style();
  page += "</style>\n</head>\n<body>\n<h1>";
  page += escaped_title;
  page += "</h1>\n" + detail::html_environment_table(report);
  page +=
      "<div id=\"report\"><noscript>The charts and tables below are drawn by JavaScript.</noscript></div>\n";
  if (!report.counters.empty()) page += "<h2>Roofline</h2>\n" + roofline_svg(report);
  page += "<script id=\"gpuprof-data\" type=\"application/json\">";
  page += detail::json_for_script_element(report_json(report));
  page += "</script>\n<script>";
  page += detail::html_report_script();
  page += "</script>\n</body>\n</html>\n";
  return page;
}

// Written whole or not at all (temp file + rename); throws gpuprof::Error.
inline void write_html(const Report& report, const std::string& path,
                       const std::string& title = "gpuprof report") {
  write_file_atomically(path, html_report(report, title));
}

GPUPROF_NAMESPACE_END
