// gpuprof/report/merged.hpp: writers of a MergedReport (merge.hpp): a
// terminal table (to_table) or GitHub markdown (to_markdown), JSON (to_json,
// schema "gpuprof.merged", see docs/ranks.md), their write_ forms,
// write(merged, path) by the extension, and a Chrome/Perfetto trace with one
// set of tracks per rank (to_chrome_trace, write_chrome_trace).
//
// ```cpp
// #include <gpuprof/report/merged.hpp>
// #include <iostream>
// void save(const std::vector<gpuprof::Report>& reports, const gpuprof::MergedReport& merged) {
//   std::cout << gpuprof::to_table(merged);
//   gpuprof::write(merged, "merged.json");  // .json, .md or .txt
//   gpuprof::write_chrome_trace(merged, reports, "merged_trace.json");
// }
// ```
#pragma once
#include <algorithm>
#include <cstdint>
#include <limits>
#include <utility>
#include <string>
#include <vector>

#include "../atomic_file.hpp"
#include "../detail/file_format.hpp"
#include "../json_writer.hpp"
#include "../merge.hpp"
#include "../table.hpp"
#include "chrome_trace.hpp"
#include "json.hpp"
#include "../report_model.hpp"

GPUPROF_NAMESPACE_BEGIN

constexpr int merged_json_version = 1;

namespace detail {
inline void write_comm_compute_json(JsonWriter& json, const CommComputeTime& time) {
  json.begin_object(JsonWriter::one_line)
      .member("communication_ms", time.communication_ms)
      .member("computation_ms", time.computation_ms)
      .member("overlap_ms", time.overlap_ms)
      .member("exposed_communication_ms", time.exposed_communication_ms())
      .end_object();
}

// "rank 1 (node-a, NVIDIA H100)": what a rank's tracks and columns are called.
inline std::string merged_rank_label(const MergedRank& rank) {
  std::string where = rank.host_name;
  if (!rank.device_name.empty()) where += (where.empty() ? "" : ", ") + rank.device_name;
  return "rank " + std::to_string(rank.rank.rank) + (where.empty() ? "" : " (" + where + ")");
}
}  // namespace detail

namespace detail {
// The merged report's tables, titled, in print order. `indent` goes before
// nested scope names.
inline std::vector<std::pair<std::string, Table>> merged_tables(const MergedReport& merged,
                                                                const std::string& indent) {
  std::vector<std::pair<std::string, Table>> tables;
  const auto ms = [](double value) { return format_significant(value); };
  const auto rank_columns = [&](Table& table) {
    for (const MergedRank& rank : merged.ranks)
      table.add_column({"rank " + std::to_string(rank.rank.rank), Align::right});
  };
  const auto indented = [&](const MergedScope& scope) {
    return indented_name(scope.path.substr(scope.path.rfind('/') + 1), scope.depth, indent);
  };

  Table scopes;
  scopes.add_column({"scope"});
  rank_columns(scopes);
  for (const char* header : {"min", "median", "max", "slowest"}) scopes.add_column({header, Align::right});
  for (const MergedScope& scope : merged.scopes) {
    std::vector<std::string> row = {indented(scope)};
    for (const Summary& summary : scope.per_rank) row.push_back(summary.n > 0 ? ms(summary.mean) : "-");
    row.insert(row.end(), {ms(scope.across_ranks.min), ms(scope.across_ranks.median),
                           ms(scope.across_ranks.max), "rank " + std::to_string(scope.slowest_rank)});
    scopes.add_row(std::move(row));
  }
  tables.emplace_back("Scopes: mean ms per rank, and across ranks", std::move(scopes));

  if (!merged.steps.empty()) {
    Table steps;
    steps.add_column({"step", Align::right});
    rank_columns(steps);
    steps.add_column({"skew", Align::right});
    steps.add_column({"slowest", Align::right});
    for (const MergedStep& step : merged.steps) {
      std::vector<std::string> row = {std::to_string(step.index)};
      for (double value : step.per_rank_ms) row.push_back(ms(value));
      row.insert(row.end(), {ms(step.skew_ms), "rank " + std::to_string(step.slowest_rank)});
      steps.add_row(std::move(row));
    }
    tables.emplace_back("Steps (" + merged.step_scope + "): ms per rank, skew = slowest - fastest",
                        std::move(steps));
  }
  if (!merged.has_kernels) return tables;

  const auto comm_columns = [](Table& table) {
    table.add_column({"rank", Align::right});
    for (const char* header : {"communication", "computation", "overlap", "exposed comm", "hidden"})
      table.add_column({header, Align::right});
  };
  const auto comm_cells = [&](std::vector<std::string> row, std::size_t position,
                              const CommComputeTime& time) {
    row.insert(row.end(), {std::to_string(merged.ranks[position].rank.rank), ms(time.communication_ms),
                           ms(time.computation_ms), ms(time.overlap_ms), ms(time.exposed_communication_ms()),
                           format_fixed(100 * time.overlap_fraction(), 1) + "%"});
    return row;
  };
  Table by_step;
  by_step.add_column({"step", Align::right});
  comm_columns(by_step);
  for (const MergedStep& step : merged.steps)
    for (std::size_t r = 0; r < step.comm_compute.size(); ++r)
      by_step.add_row(comm_cells({std::to_string(step.index)}, r, step.comm_compute[r]));
  if (!by_step.rows().empty())
    tables.emplace_back("Communication vs computation per step (GPU ms; hidden = overlap / communication)",
                        std::move(by_step));
  Table by_scope;
  by_scope.add_column({"scope"});
  comm_columns(by_scope);
  for (const MergedScope& scope : merged.scopes)
    for (std::size_t r = 0; r < scope.comm_compute.size(); ++r) {
      const CommComputeTime& time = scope.comm_compute[r];
      if (time.communication_ms > 0 || time.computation_ms > 0)
        by_scope.add_row(comm_cells({indented(scope)}, r, time));
    }
  tables.emplace_back("Communication vs computation per scope (inclusive, GPU ms)", std::move(by_scope));
  return tables;
}

// The ranks merged, "slowest rank per step: rank 1 in 7 of 10, rank 0 in 3 of 10", the skew's
// median and max, then the notes.
inline std::vector<std::string> merged_summary_lines(const MergedReport& merged) {
  std::vector<std::string> lines;
  std::string ranks = std::to_string(merged.ranks.size()) + " rank(s)";
  if (merged.world_size > 0) ranks += " of a world of " + std::to_string(merged.world_size);
  lines.push_back(ranks);
  if (!merged.steps.empty()) {
    std::string slowest;
    for (std::size_t r = 0; r < merged.ranks.size(); ++r)
      if (merged.slowest_count[r] > 0)
        slowest += (slowest.empty() ? "" : ", ") + std::string("rank ") +
                   std::to_string(merged.ranks[r].rank.rank) + " in " +
                   std::to_string(merged.slowest_count[r]) + " of " + std::to_string(merged.steps.size());
    lines.push_back("slowest rank per step: " + slowest);
    lines.push_back("skew per step: median " + format_significant(merged.skew_ms.median) + " ms, max " +
                    format_significant(merged.skew_ms.max) + " ms");
  }
  for (const std::string& note : merged.notes) lines.push_back("note: " + note);
  return lines;
}
}  // namespace detail

inline std::string to_table(const MergedReport& merged) {
  std::string out = "gpuprof merged report\n";
  // Host, device and scope names come from the files: terminal_safe.
  for (const MergedRank& rank : merged.ranks)
    out += "  " + terminal_safe(detail::merged_rank_label(rank)) + '\n';
  for (const auto& [title, table] : detail::merged_tables(merged, "  "))
    out += '\n' + terminal_safe(title) + '\n' + table.text();
  out += '\n';
  for (const std::string& line : detail::merged_summary_lines(merged)) out += terminal_safe(line) + '\n';
  return out;
}

inline std::string to_markdown(const MergedReport& merged) {
  std::string text = "**gpuprof merged report**\n\n";
  for (const MergedRank& rank : merged.ranks)
    text += "- " + detail::markdown_cell(detail::merged_rank_label(rank)) + "\n";
  for (const auto& [title, table] : detail::merged_tables(merged, "&nbsp;&nbsp;"))
    text += "\n**" + detail::markdown_cell(title) + "**\n\n" + table.markdown();
  text += "\n";
  for (const std::string& line : detail::merged_summary_lines(merged))
    text += detail::markdown_cell(line) + "\n\n";
  return text;
}

inline std::string to_json(const MergedReport& merged) {
  JsonWriter json;
  json.begin_object()
      .member("schema", "gpuprof.merged")
      .member("version", merged_json_version)
      .key("world_size");
  if (merged.world_size > 0) json.value(merged.world_size);
  else json.value(nullptr);
  json.key("ranks").begin_array();
  for (const MergedRank& rank : merged.ranks) {
    json.begin_object(JsonWriter::one_line).member("rank", rank.rank.rank).key("local_rank");
    if (rank.rank.local_rank >= 0) json.value(rank.rank.local_rank);
    else json.value(nullptr);
    json.member("host_name", rank.host_name).member("device", rank.device_name).end_object();
  }
  json.end_array().member("step_scope", merged.step_scope).member("has_kernels", merged.has_kernels);

  json.key("scopes").begin_array();
  for (const MergedScope& scope : merged.scopes) {
    json.begin_object().member("path", scope.path).member("depth", scope.depth).key("per_rank").begin_array();
    for (const Summary& summary : scope.per_rank) {
      if (summary.n == 0) {
        json.value(nullptr);
        continue;
      }
      json.begin_object(JsonWriter::one_line)
          .member("n", summary.n)
          .member("mean", summary.mean)
          .member("median", summary.median)
          .member("min", summary.min)
          .member("max", summary.max)
          .member("stddev", summary.stddev)
          .end_object();
    }
    json.end_array()
        .key("across_ranks")
        .begin_object(JsonWriter::one_line)
        .member("min_ms", scope.across_ranks.min)
        .member("median_ms", scope.across_ranks.median)
        .member("max_ms", scope.across_ranks.max)
        .member("slowest_rank", scope.slowest_rank)
        .member("fastest_rank", scope.fastest_rank)
        .end_object()
        .key("pooled_ms");
    write_summary_json(json, scope.pooled);
    if (merged.has_kernels) {
      json.key("comm_compute").begin_array();
      for (const CommComputeTime& time : scope.comm_compute) detail::write_comm_compute_json(json, time);
      json.end_array();
    }
    json.end_object();
  }
  json.end_array();

  json.key("steps").begin_array();
  for (const MergedStep& step : merged.steps) {
    json.begin_object().member("step", step.index).key("per_rank_ms").begin_array(JsonWriter::one_line);
    for (double ms : step.per_rank_ms) json.value(ms);
    json.end_array()
        .member("skew_ms", step.skew_ms)
        .member("slowest_rank", step.slowest_rank)
        .member("fastest_rank", step.fastest_rank);
    if (merged.has_kernels) {
      json.key("comm_compute").begin_array();
      for (const CommComputeTime& time : step.comm_compute) detail::write_comm_compute_json(json, time);
      json.end_array();
    }
    json.end_object();
  }
  json.end_array().key("slowest_count").begin_array(JsonWriter::one_line);
  for (std::size_t count : merged.slowest_count) json.value(count);
  json.end_array().key("skew_ms");
  write_summary_json(json, merged.skew_ms);
  json.key("notes").begin_array();
  for (const std::string& note : merged.notes) json.value(note);
  json.end_array().end_object();
  return json.str() + "\n";
}

inline void write_table(const MergedReport& merged, const std::string& path) {
  write_file_atomically(path, to_table(merged));
}
inline void write_markdown(const MergedReport& merged, const std::string& path) {
  write_file_atomically(path, to_markdown(merged));
}
inline void write_json(const MergedReport& merged, const std::string& path) {
  write_file_atomically(path, to_json(merged));
}

// JSON, markdown or the terminal table by the extension of `path` (.json, .md, .txt).
inline void write(const MergedReport& merged, const std::string& path) {
  detail::write_by_extension(path, "a merged report",
                             {{".json", [&] { return to_json(merged); }},
                              {".md", [&] { return to_markdown(merged); }},
                              {".txt", [&] { return to_table(merged); }}});
}

// One Chrome/Perfetto trace of every rank: rank R's host and GPU processes
// are named "rank R (host, GPU) ..." and take pids from R * 10000 on, so the
// ranks sit one under the other and the straggler's steps stand out. Ranks on
// one host share its clock and keep their real offsets; when the hosts differ
// (clocks not comparable) each rank starts at zero. `reports` is what
// merge() was given; steps are named ProfilerStep#N.
inline std::string to_chrome_trace(const MergedReport& merged, const std::vector<Report>& reports) {
  constexpr std::uint32_t pids_per_rank = 10000;
  const auto report_of = [&](const MergedRank& rank) -> const Report& {
    if (rank.source >= reports.size()) throw Error("merged trace: the reports are not the ones merged");
    return reports[rank.source];
  };
  const bool one_host = std::all_of(merged.ranks.begin(), merged.ranks.end(), [&](const MergedRank& rank) {
    return rank.host_name == merged.ranks.front().host_name;
  });
  std::int64_t shared_origin = std::numeric_limits<std::int64_t>::max();
  for (const MergedRank& rank : merged.ranks)
    shared_origin = std::min(shared_origin, detail::trace_origin_ns(report_of(rank)));

  JsonWriter json;
  json.begin_object()
      .member("displayTimeUnit", "ms")
      .key("otherData")
      .begin_object()
      .member("generator", "gpuprof")
      .member("merged_ranks", merged.ranks.size())
      .member("clocks", one_host ? "one host: shared origin" : "several hosts: each rank from its own origin")
      .member("origin_ns", one_host ? shared_origin : 0)
      .end_object()
      .member("schemaVersion", 1)
      .key("traceEvents")
      .begin_array();
  ChromeTraceOptions options;
  options.step_scope = merged.step_scope;
  std::uint64_t flow_id = 0;
  for (const MergedRank& rank : merged.ranks) {
    const Report& report = report_of(rank);
    const std::uint32_t offset = static_cast<std::uint32_t>(rank.rank.rank) * pids_per_rank;
    detail::TraceEvents events(json, one_host ? shared_origin : detail::trace_origin_ns(report), offset);
    detail::write_trace_tracks(events, report, detail::merged_rank_label(rank) + " ",
                               static_cast<std::uint32_t>(rank.rank.rank) * 100);
    detail::write_trace_report_events(json, events, report, options, flow_id);
  }
  json.end_array().end_object();
  return json.str() + "\n";
}

inline void write_chrome_trace(const MergedReport& merged, const std::vector<Report>& reports,
                               const std::string& path) {
  write_file_atomically(path, to_chrome_trace(merged, reports));
}

GPUPROF_NAMESPACE_END
