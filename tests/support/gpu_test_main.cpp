// The main() of every doctest binary that needs a GPU.
//
// Where no GPU can exist it prints why and exits with 77, which ctest's
// SKIP_RETURN_CODE turns into "skipped", never "passed"; a broken driver, or
// no GPU under GPUPROF_REQUIRE_GPU=1, fails (gpu_probe.hpp says which is
// which). A run whose filters select no test case fails too: ctest entries
// that run one test suite of a binary (the cuDNN cases) cannot pass by
// matching nothing after a rename.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <cstdio>

#include "gpu_probe.hpp"

namespace {

unsigned selected_test_cases = 0;
bool test_run_ended = false;

// Only counts: doctest's own reporter prints everything.
struct SelectionCounter : doctest::IReporter {
  explicit SelectionCounter(const doctest::ContextOptions&) {}
  void report_query(const doctest::QueryData&) override {}
  void test_run_start() override {}
  void test_run_end(const doctest::TestRunStats& stats) override {
    test_run_ended = true;
    selected_test_cases = stats.numTestCasesPassingFilters;
  }
  void test_case_start(const doctest::TestCaseData&) override {}
  void test_case_reenter(const doctest::TestCaseData&) override {}
  void test_case_end(const doctest::CurrentTestCaseStats&) override {}
  void test_case_exception(const doctest::TestCaseException&) override {}
  void subcase_start(const doctest::SubcaseSignature&) override {}
  void subcase_end() override {}
  void log_assert(const doctest::AssertData&) override {}
  void log_message(const doctest::MessageData&) override {}
  void test_case_skipped(const doctest::TestCaseData&) override {}
};
REGISTER_LISTENER("selection_counter", 1, SelectionCounter);

}  // namespace

int main(int argc, char** argv) {
  doctest::Context context(argc, argv);
  if (context.shouldExit()) return context.run();  // --help, --list-test-cases and the like
  if (const int gate = gpuprof_test::gpu_test_gate(gpuprof_test::probe_gpu()); gate != 0) return gate;
  const int result = context.run();
  if (result == 0 && test_run_ended && selected_test_cases == 0) {
    std::fprintf(stderr, "FAILED: the filters selected no test case\n");
    return 1;
  }
  return result;
}
