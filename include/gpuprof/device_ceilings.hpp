// gpuprof/device_ceilings.hpp: a GPU's roofline ceilings from its data
// sheet, found by the device name and compute capability the caller read
// (CounterCapture reads them from its device). Nothing here probes the
// machine. The figures and their sources: docs/counters.md#ceilings.
//
// ```cpp
// #include <gpuprof/device_ceilings.hpp>
// gpuprof::RooflineCeilings h200() {
//   return gpuprof::tabled_ceilings("NVIDIA H200", 9, 0);  // source "table: NVIDIA H200 data sheet"
// }
// ```
#pragma once
#include <cctype>
#include <string>
#include <vector>

#include "config.hpp"
#include "roofline.hpp"

GPUPROF_NAMESPACE_BEGIN

// One row of the table: a device whose name holds every word of `words`
// (case-insensitive, whole words: "L4" is not "L40S") and none of `unless`,
// with this compute capability major.
struct TabledDevice {
  std::vector<std::string> words;
  std::vector<std::string> unless;
  int compute_major = 0;
  RooflineCeilings ceilings;
};

namespace detail {
inline RooflineCeilings data_sheet(const char* sheet, double fp32, double tf32, double bf16, double fp16,
                                   double dram_bytes_per_s) {
  return {{{"tensor bf16", bf16}, {"tensor fp16", fp16}, {"tensor tf32", tf32}, {"fp32", fp32}},
          dram_bytes_per_s,
          std::string("table: ") + sheet};
}
}  // namespace detail

// Dense peaks (the data sheets' dense figures where they state them, as the
// L40S's does, else half their "with sparsity" tensor figures), boost clock;
// DRAM bandwidth in bytes/s. The first row that matches wins, so a
// variant precedes its family ("NVIDIA H100 80GB HBM3", the SXM card, ends
// at the plain H100 row). GeForce tensor FP16/BF16 peaks are those with
// FP32 accumulation (FP16 accumulation runs twice as fast on those cards).
inline const std::vector<TabledDevice>& ceilings_table() {
  using detail::data_sheet;
  // Name words, words it must not have, compute capability major; data sheet,
  // FP32, TF32, BF16 and FP16 peak FLOP/s, DRAM bytes/s.
  // clang-format off
  static const std::vector<TabledDevice> table = {
      {{"H100", "NVL"},  {}, 9, data_sheet("NVIDIA H100 NVL data sheet",  60e12, 417.5e12, 835.5e12, 835.5e12, 3.9e12)},
      {{"H100", "PCIe"}, {}, 9, data_sheet("NVIDIA H100 PCIe data sheet", 51e12, 378e12,   756.5e12, 756.5e12, 2.0e12)},
      {{"H100"},         {}, 9, data_sheet("NVIDIA H100 SXM data sheet",  67e12, 494.5e12, 989.5e12, 989.5e12, 3.35e12)},
      {{"H200", "NVL"},  {}, 9, data_sheet("NVIDIA H200 NVL data sheet",  60e12, 417.5e12, 835.5e12, 835.5e12, 4.8e12)},
      {{"H200"},         {}, 9, data_sheet("NVIDIA H200 data sheet",      67e12, 494.5e12, 989.5e12, 989.5e12, 4.8e12)},
      {{"A100", "80GB", "PCIe"}, {}, 8, data_sheet("NVIDIA A100 80GB PCIe data sheet", 19.5e12, 156e12, 312e12, 312e12, 1.935e12)},
      {{"A100", "80GB"},         {}, 8, data_sheet("NVIDIA A100 80GB SXM data sheet",  19.5e12, 156e12, 312e12, 312e12, 2.039e12)},
      {{"A100", "40GB"},         {}, 8, data_sheet("NVIDIA A100 40GB data sheet",      19.5e12, 156e12, 312e12, 312e12, 1.555e12)},
      {{"L40S"}, {}, 8, data_sheet("NVIDIA L40S data sheet", 91.6e12, 183e12, 362.05e12, 362.05e12, 0.864e12)},
      {{"L4"},   {}, 8, data_sheet("NVIDIA L4 data sheet",   30.3e12, 60e12,  121e12,   121e12,   0.3e12)},
      {{"RTX", "4090"}, {"D"},  8, data_sheet("NVIDIA Ada GPU architecture whitepaper, RTX 4090",           82.6e12, 82.6e12, 165.2e12, 165.2e12, 1.008e12)},
      {{"RTX", "3090"}, {"Ti"}, 8, data_sheet("NVIDIA Ampere GA102 GPU architecture whitepaper, RTX 3090", 35.6e12, 35.6e12, 71e12,    71e12,    0.936e12)},
  };
  // clang-format on
  return table;
}

namespace detail {
// The device name's words: runs of letters and digits ("A100-SXM4-80GB" is
// A100, SXM4, 80GB), upper-cased.
inline std::vector<std::string> name_words(const std::string& name) {
  std::vector<std::string> words(1);
  for (const char c : name) {
    if (std::isalnum(static_cast<unsigned char>(c)))
      words.back() += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    else if (!words.back().empty()) words.emplace_back();
  }
  if (words.back().empty()) words.pop_back();
  return words;
}

inline bool has_word(const std::vector<std::string>& words, std::string word) {
  for (char& c : word) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  for (const std::string& w : words)
    if (w == word) return true;
  return false;
}
}  // namespace detail

// The ceilings of the first ceilings_table() row that matches. None (empty
// roofs, `source` saying why) for a device not in the table.
inline RooflineCeilings tabled_ceilings(const std::string& device_name, int compute_major,
                                        int compute_minor) {
  const std::vector<std::string> words = detail::name_words(device_name);
  for (const TabledDevice& row : ceilings_table()) {
    bool match = row.compute_major == compute_major;
    for (const std::string& word : row.words) match = match && detail::has_word(words, word);
    for (const std::string& word : row.unless) match = match && !detail::has_word(words, word);
    if (match) return row.ceilings;
  }
  RooflineCeilings none;
  none.source = "none: \"" + device_name + "\" (compute capability " + std::to_string(compute_major) + "." +
                std::to_string(compute_minor) + ") is not in gpuprof's table of data sheets";
  return none;
}

GPUPROF_NAMESPACE_END
