// Parameter axes (axes.hpp), bench over them (bench_axes.hpp), their rows in
// gpuprof.bench files and gpuprof-compare's matching of rows by axis values.
#include <gpuprof/bench_axes.hpp>
#include <gpuprof/compare.hpp>
#include <gpuprof/report/bench_json.hpp>
#include <gpuprof/report/read_bench_json.hpp>

#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "support/json_parse.hpp"

using gpuprof::Axes;
using gpuprof::AxisPoint;

namespace {

std::vector<std::string> row_names(const Axes& axes, const std::string& benchmark) {
  std::vector<std::string> names;
  for (const AxisPoint& point : axes.points()) names.push_back(point.row_name(benchmark));
  return names;
}

gpuprof::BenchResult host_samples(double ms) {
  gpuprof::BenchResult result;
  for (int i = 0; i < 8; ++i) result.host_ms.push_back(ms * (1 + 0.001 * i));
  result.host = gpuprof::summarize(result.host_ms);
  return result;
}

gpuprof::MeasuredRun run_of(const std::vector<gpuprof::NamedBenchResult>& rows) {
  return gpuprof::detail::measured_run_from_json(gpuprof_test::parse_json(gpuprof::to_bench_json(rows, {})));
}

}  // namespace

TEST_CASE("axes: the cartesian product, last axis fastest, and readable row names") {
  const Axes axes = Axes::product({{"size", {"small", "large"}}, {"ctx", {128, 512}}, {"scale", {0.5}}});
  CHECK(row_names(axes, "attn") ==
        std::vector<std::string>{"attn[size=small,ctx=128,scale=0.5]", "attn[size=small,ctx=512,scale=0.5]",
                                 "attn[size=large,ctx=128,scale=0.5]", "attn[size=large,ctx=512,scale=0.5]"});
  const AxisPoint& point = axes.points()[1];
  CHECK(point.integer("ctx") == 512);
  CHECK(point.text("size") == "small");
  CHECK(point.number("scale") == 0.5);
  CHECK(point.number("ctx") == 512.0);
  CHECK_THROWS_WITH_AS(point.text("ctx"), "gpuprof axes: the value 512 is not a text", gpuprof::Error);
  CHECK_THROWS_WITH_AS(point["heads"],
                       "gpuprof axes: the point [size=small,ctx=512,scale=0.5] has no axis heads",
                       gpuprof::Error);
  CHECK(Axes::product({}).points().size() == 1);  // no axes: one point, the benchmark's name alone
  CHECK(Axes::product({}).points()[0].row_name("step") == "step");
}

TEST_CASE("axes: an explicit list of points, checked") {
  const Axes axes = Axes::list({{{"mode", "fwd"}, {"ctx", 128}}, {{"mode", "step"}, {"ctx", 1024}}});
  CHECK(row_names(axes, "t") == std::vector<std::string>{"t[mode=fwd,ctx=128]", "t[mode=step,ctx=1024]"});
  CHECK_THROWS_WITH_AS(
      Axes::list({{{"mode", "fwd"}}, {{"ctx", 128}}}),
      "gpuprof axes: the point [ctx=128] does not name the axes of [mode=fwd] in their order",
      gpuprof::Error);
  CHECK_THROWS_WITH_AS(Axes::list({{{"ctx", 128}}, {{"ctx", 128}}}),
                       "gpuprof axes: the point [ctx=128] comes twice", gpuprof::Error);
  CHECK_THROWS_WITH_AS(Axes::product({{"n", {1, 1.5}}}),
                       "gpuprof axes: axis n mixes integers, reals and texts (1, 1.5)", gpuprof::Error);
  CHECK_THROWS_WITH_AS(Axes::product({{"n", {}}}), "gpuprof axes: axis n has no values", gpuprof::Error);
  CHECK_THROWS_WITH_AS(Axes::product({{"n", {1}}, {"n", {2}}}), "gpuprof axes: two axes are named n",
                       gpuprof::Error);
  CHECK_THROWS_AS(Axes::product({{"a,b", {1}}}), gpuprof::Error);
  CHECK_THROWS_AS(Axes::product({{"layout", {"row=major"}}}), gpuprof::Error);
  CHECK_THROWS_AS(Axes::list({}), gpuprof::Error);
}

TEST_CASE("bench over axes: setup untimed once per point, its callable timed, a skipped point not measured") {
  gpuprof::BenchOptions options;
  options.warmup = 1;
  options.iters = 3;
  std::vector<std::string> setups;
  int timed_calls = 0;
  const Axes axes = Axes::product({{"n", {1, 2}}, {"kind", {"plain", "unsupported"}}});
  const std::vector<gpuprof::NamedBenchResult> rows = gpuprof::bench(
      "work", axes,
      [&](const AxisPoint& point) {
        setups.push_back(point.row_name(""));
        if (point.text("kind") == "unsupported") throw gpuprof::SkipPoint("kind unsupported");
        return [&timed_calls] { ++timed_calls; };
      },
      options);
  CHECK(setups == std::vector<std::string>{"[n=1,kind=plain]", "[n=1,kind=unsupported]", "[n=2,kind=plain]",
                                           "[n=2,kind=unsupported]"});
  CHECK(timed_calls == 2 * (1 + 1 + 3));  // per measured point: cold call, warm-up, samples
  REQUIRE(rows.size() == 4);
  CHECK(rows[0].name == "work[n=1,kind=plain]");
  CHECK(rows[0].axes.integer("n") == 1);
  CHECK(rows[0].result.host_ms.size() == 3);
  CHECK(rows[1].result.host_ms.empty());
  CHECK(rows[1].result.stop_reason == "skipped: kind unsupported");

  int void_calls = 0;  // a setup that returns nothing is itself the timed work
  const auto plain = gpuprof::bench(
      "plain", Axes::product({{"n", {7}}}),
      [&void_calls](const AxisPoint& point) { void_calls += point.integer("n") > 0; }, options);
  CHECK(void_calls == 1 + 1 + 3);
  CHECK(plain[0].result.host_ms.size() == 3);

  const gpuprof::Comparison c = gpuprof::compare_runs(run_of(rows), run_of(rows));
  REQUIRE(c.rows.size() == 4);
  CHECK(c.rows[1].verdict == gpuprof::Verdict::not_measured);
  CHECK(c.rows[1].note == "base: skipped: kind unsupported");
}

TEST_CASE("gpuprof.bench rows carry their axes; compare matches rows by axis values in any order") {
  const AxisPoint small_128({{"size", "small"}, {"ctx", 128}, {"scale", 0.125}});
  gpuprof::NamedBenchResult row(small_128.row_name("attn"), host_samples(1.0));
  row.axes = small_128;
  const gpuprof_test::Json doc =
      gpuprof_test::parse_json(gpuprof::to_bench_json({row, {"plain", host_samples(2.0)}}, {}));
  const gpuprof_test::Json& axes = doc["benchmarks"][0]["axes"];
  REQUIRE(axes.keys() == std::vector<std::string>{"size", "ctx", "scale"});
  CHECK(axes["size"].as_string() == "small");
  CHECK(axes["ctx"].as_int64() == 128);
  CHECK(axes["scale"].as_number() == 0.125);
  CHECK(doc["version"].as_int64() == 1);  // keys are only added within a version
  CHECK(doc["benchmarks"][1]["axes"].size() == 0);

  // The new run declares its axes in another order: the rows still match,
  // under the base's name, and a point only one side ran stays apart.
  const AxisPoint reordered({{"ctx", 128}, {"scale", 0.125}, {"size", "small"}});
  gpuprof::NamedBenchResult next(reordered.row_name("attn"), host_samples(1.5));
  next.axes = reordered;
  const AxisPoint other({{"ctx", 256}, {"scale", 0.125}, {"size", "small"}});
  gpuprof::NamedBenchResult only_new(other.row_name("attn"), host_samples(1.0));
  only_new.axes = other;
  const gpuprof::Comparison c = gpuprof::compare_runs(run_of({row}), run_of({next, only_new}));
  REQUIRE(c.rows.size() == 2);
  CHECK(c.rows[0].key == "attn[size=small,ctx=128,scale=0.125]");
  CHECK(c.rows[0].verdict == gpuprof::Verdict::slower);
  CHECK(c.rows[1].key == "attn[ctx=256,scale=0.125,size=small]");
  CHECK(c.rows[1].verdict == gpuprof::Verdict::only_in_new);

  // Two rows of one run at one point are refused, as two rows of one name are.
  CHECK_THROWS_AS(gpuprof::compare_runs(run_of({row, next}), run_of({row})), gpuprof::InputError);
}

TEST_CASE("a bench file whose axes break the axes' rules is refused as bad input") {
  const AxisPoint point({{"mode", "fwd"}});
  gpuprof::NamedBenchResult row(point.row_name("lm"), host_samples(1.0));
  row.axes = point;
  std::string text = gpuprof::to_bench_json({row}, {});
  // An axis name holding '=' (a delimiter of row names), as a fuzzer wrote it.
  const std::string::size_type at = text.find("\"mode\":");
  REQUIRE(at != std::string::npos);
  text.replace(at, 6, "\"mo=de\"");
  CHECK_THROWS_WITH_AS(gpuprof::detail::measured_run_from_json(gpuprof_test::parse_json(text)),
                       doctest::Contains("mo=de"), gpuprof::InputError);
}
