// The table of data-sheet ceilings: each listed card is found by the name its
// driver reports and its compute capability, a variant by its own row (PCIe,
// NVL, 80GB), words match whole ("L4" is not "L40S"), and a device not in the
// table gets no roofs and a source that says why.
#include <doctest/doctest.h>

#include <gpuprof/device_ceilings.hpp>
#include <gpuprof/report/scope_counters.hpp>

#include <string>
#include <utility>

namespace {

double peak(const gpuprof::RooflineCeilings& ceilings, const char* pipe) {
  const gpuprof::PipeCeiling* found = ceilings.find(pipe);
  REQUIRE_MESSAGE(found != nullptr, pipe << " missing in " << ceilings.source);
  return found->flop_per_s;
}

}  // namespace

TEST_CASE("cards are found by the names their drivers report") {
  struct Card {
    const char* name;
    int major, minor;
    const char* source;
    double bf16, dram;
  };
  const Card cards[] = {
      {"NVIDIA H100 80GB HBM3", 9, 0, "table: NVIDIA H100 SXM data sheet", 989.5e12, 3.35e12},
      {"NVIDIA H100 PCIe", 9, 0, "table: NVIDIA H100 PCIe data sheet", 756.5e12, 2.0e12},
      {"NVIDIA H100 NVL", 9, 0, "table: NVIDIA H100 NVL data sheet", 835.5e12, 3.9e12},
      {"NVIDIA H200", 9, 0, "table: NVIDIA H200 data sheet", 989.5e12, 4.8e12},
      {"NVIDIA H200 NVL", 9, 0, "table: NVIDIA H200 NVL data sheet", 835.5e12, 4.8e12},
      {"NVIDIA A100-SXM4-80GB", 8, 0, "table: NVIDIA A100 80GB SXM data sheet", 312e12, 2.039e12},
      {"NVIDIA A100 80GB PCIe", 8, 0, "table: NVIDIA A100 80GB PCIe data sheet", 312e12, 1.935e12},
      {"NVIDIA A100-SXM4-40GB", 8, 0, "table: NVIDIA A100 40GB data sheet", 312e12, 1.555e12},
      {"NVIDIA A100-PCIE-40GB", 8, 0, "table: NVIDIA A100 40GB data sheet", 312e12, 1.555e12},
      {"NVIDIA L4", 8, 9, "table: NVIDIA L4 data sheet", 121e12, 0.3e12},
      {"NVIDIA L40S", 8, 9, "table: NVIDIA L40S data sheet", 362.05e12, 0.864e12},
      {"NVIDIA GeForce RTX 4090", 8, 9, "table: NVIDIA Ada GPU architecture whitepaper, RTX 4090", 165.2e12,
       1.008e12},
      {"NVIDIA GeForce RTX 3090", 8, 6, "table: NVIDIA Ampere GA102 GPU architecture whitepaper, RTX 3090",
       71e12, 0.936e12},
  };
  for (const Card& card : cards) {
    CAPTURE(card.name);
    const gpuprof::RooflineCeilings ceilings = gpuprof::tabled_ceilings(card.name, card.major, card.minor);
    CHECK(ceilings.source == card.source);
    CHECK(peak(ceilings, "tensor bf16") == card.bf16);
    CHECK(ceilings.dram_bytes_per_s == card.dram);
    // Every pipe the roofline knows has its roof.
    for (const gpuprof::FlopPipe& pipe : gpuprof::flop_pipes()) CHECK(peak(ceilings, pipe.name) > 0);
  }
}

TEST_CASE("a card not in the table, or a name on the wrong architecture, gets no roofs and says why") {
  for (const auto& [name, major] : {std::pair<const char*, int>{"NVIDIA L40", 8},
                                    {"NVIDIA GeForce RTX 3090 Ti", 8},
                                    {"NVIDIA H100 PCIe", 8},
                                    {"Tesla V100-SXM2-16GB", 7}}) {
    CAPTURE(name);
    const gpuprof::RooflineCeilings ceilings = gpuprof::tabled_ceilings(name, major, 0);
    CHECK(ceilings.empty());
    CHECK(ceilings.source.find("not in gpuprof's table") != std::string::npos);
    CHECK(ceilings.source.find(name) != std::string::npos);
    CHECK(gpuprof::detail::ceilings_remark(ceilings).find("no roofline placement") != std::string::npos);
  }
}

TEST_CASE("every row of the table names its data sheet and has every roof") {
  for (const gpuprof::TabledDevice& row : gpuprof::ceilings_table()) {
    CAPTURE(row.ceilings.source);
    CHECK(row.ceilings.source.rfind("table: NVIDIA ", 0) == 0);
    CHECK(row.ceilings.dram_bytes_per_s > 0);
    CHECK(row.ceilings.pipes.size() == gpuprof::flop_pipes().size());
    // Tensor pipes are at least as fast as the FP32 one on every listed card.
    CHECK(peak(row.ceilings, "tensor bf16") >= peak(row.ceilings, "fp32"));
  }
}
