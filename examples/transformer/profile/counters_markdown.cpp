// profile/counters_markdown.cpp: transformer_profile --counters as markdown
// and JSON, from the reports' counters (gpuprof/report/scope_counters.hpp).
#include "profile/counters_results.hpp"

#include <gpuprof/json_writer.hpp>
#include <gpuprof/report/counters_json.hpp>
#include <gpuprof/report/scope_counters.hpp>
#include <gpuprof/table.hpp>

#include <string>

namespace transformer::profile {

std::string counters_file(const CountersRun& run, const std::string& extension) {
  return "counters-" + run.slug + "-" + to_string(run.mode) + "." + extension;
}

namespace {

std::string ceilings_line(const gpuprof::RooflineCeilings& ceilings) {
  std::string line = "DRAM " + gpuprof::format_significant(ceilings.dram_bytes_per_s / 1e9) + " GB/s";
  for (const gpuprof::PipeCeiling& c : ceilings.pipes)
    line += "; " + c.pipe + " " + gpuprof::format_significant(c.flop_per_s / 1e12) + " TFLOP/s (ridge " +
            gpuprof::format_significant(ceilings.ridge(c)) + " FLOP/B)";
  return line;
}

gpuprof::Table scope_table(const gpuprof::Report& report) {
  gpuprof::Table table;
  table.add_column({"Scope"});
  for (const char* header : {"Bound", "Pipe", "% of roof", "FLOP/B", "TFLOP/s", "DRAM GB", "Declared FLOPs"})
    table.add_column({header, gpuprof::Align::right});
  for (std::size_t i = 0; i < report.nodes.size(); ++i) {
    const gpuprof::ScopeCounters c = gpuprof::scope_counters(report, i);
    if (c.range == nullptr) continue;
    const gpuprof::RangeMeasures& m = c.measured;
    const auto known = [](double v, double scale) {
      return v > 0 ? gpuprof::format_significant(v / scale) : "-";
    };
    table.add_row(
        {report.nodes[i].path, gpuprof::bound_name(c.placement.bound),
         c.placement.pipe.empty() ? "-" : c.placement.pipe,
         c.placement.percent_of_roof >= 0 ? gpuprof::format_fixed(c.placement.percent_of_roof, 1) : "-",
         known(m.intensity(), 1), known(m.flop_per_s(), 1e12), known(m.dram_bytes, 1e9),
         c.flops.known() ? gpuprof::format_fixed(c.flops.difference_pct(), 1) + " %" +
                               (c.flops.flagged() ? " (over 20 %)" : "")
                         : "-"});
  }
  return table;
}

}  // namespace

std::string counters_markdown(const CountersResults& results) {
  std::string text = "# Hardware counters per scope: memory- or compute-bound\n\n";
  text += "Device: " + results.device + "; batch " + std::to_string(results.batch) + ", " +
          std::to_string(results.warmup) + " warm-up and " + std::to_string(results.steps) +
          " timed step(s).\n\n";
  text += "Ceilings (measured): " + ceilings_line(results.ceilings) + ".\n\n";
  text +=
      "A scope left of its pipe's ridge is memory-bound (its roof is DRAM bandwidth × intensity), right of "
      "it compute-bound (its roof is the pipe's peak). \"% of roof\" is how much of that roof it reached.\n";
  for (const std::string& note : results.notes) text += "\n- " + note;
  for (const CountersRun& run : results.runs) {
    text += "\n## " + run.label + ", " + to_string(run.mode) + "\n\n";
    if (run.status != RunStatus::ok) {
      text += std::string("Not measured (") + to_string(run.status) + ")" +
              (run.note.empty() ? "" : ": " + run.note) + ".\n";
      continue;
    }
    const gpuprof::CounterSet& set = run.report.counters;
    if (set.scopes.empty()) {
      text += "No counters: " + (set.note.empty() ? std::string("none collected") : set.note) + ".\n";
      continue;
    }
    text += std::to_string(set.metrics.size()) + " metrics in " + std::to_string(set.passes) +
            " replay pass(es)" + (set.chip.empty() ? "" : " on " + set.chip) +
            (set.note.empty() ? "" : "; " + set.note) + ".\n\n";
    text += scope_table(run.report).markdown();
    text += "\n![roofline](" + counters_file(run, "svg") + ")\n";
  }
  return text;
}

std::string counters_json(const CountersResults& results) {
  gpuprof::JsonWriter json;
  json.begin_object()
      .member("schema", "transformer_profile.counters")
      .member("version", 1)
      .member("device", results.device)
      .member("batch", results.batch)
      .member("warmup", results.warmup)
      .member("steps", results.steps)
      .key("ceilings");
  gpuprof::write_ceilings_json(json, results.ceilings);
  json.key("notes").begin_array();
  for (const std::string& note : results.notes) json.value(note);
  json.end_array().key("runs").begin_array();
  for (const CountersRun& run : results.runs) {
    json.begin_object()
        .member("configuration", run.label)
        .member("mode", to_string(run.mode))
        .member("status", to_string(run.status))
        .member("note", run.note)
        .member("report", counters_file(run, "json"))
        .member("picture", counters_file(run, "svg"))
        .member("passes", run.report.counters.passes)
        .key("scopes")
        .begin_array();
    for (std::size_t i = 0; i < run.report.nodes.size(); ++i) {
      if (gpuprof::find_counter_range(run.report.counters.scopes, run.report.nodes[i].path) == nullptr)
        continue;
      json.begin_object(gpuprof::JsonWriter::one_line)
          .member("path", run.report.nodes[i].path)
          .key("counters");
      gpuprof::write_scope_counters_json(json, run.report, i);
      json.end_object();
    }
    json.end_array().end_object();
  }
  json.end_array().end_object();
  return json.str() + "\n";
}

}  // namespace transformer::profile
