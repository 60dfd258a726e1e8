// gpuprof/kernel_names.hpp: what to call a GPU kernel and which kind of work
// it is. Demangling, the short "base" name, and the categoriser, all pure host
// code (no CUDA, no CUPTI) so the kernel-capture layer and the summaries share
// one definition and CPU tests pin it down.
//
// ```cpp
// #include <gpuprof/kernel_names.hpp>
// int main() {
//   const std::string full = gpuprof::demangle("_Z14softmax_kernelPfi");
//   const std::string base =
//       gpuprof::base_name("void at::native::vectorized_elementwise_kernel<4, F>(int, T2, T3)");
//   return full == "softmax_kernel(float*, int)" && base == "at::native::vectorized_elementwise_kernel"
//              ? 0
//              : 1;
// }
// ```
// and CategoryRules::defaults().categorize(record) calls that kernel "elementwise".
#pragma once
#include <cxxabi.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "config.hpp"
#include "kernel_record.hpp"

GPUPROF_NAMESPACE_BEGIN

// The Itanium-ABI demangling of `name` ("_Z..."), or `name` unchanged when it
// is not a mangled C++ name (cuBLAS's "sm90_xmma_gemm_..._cublas", extern "C"
// kernels) or does not demangle.
inline std::string demangle(const std::string& name) {
  if (name.rfind("_Z", 0) != 0) return name;
  int status = 0;
  const std::unique_ptr<char, void (*)(void*)> demangled(
      abi::__cxa_demangle(name.c_str(), nullptr, nullptr, &status), std::free);
  return status == 0 && demangled ? std::string(demangled.get()) : name;
}

namespace detail {
// Index of the '(' that opens the parameter list ending at `close` (a ')'),
// or npos when the parentheses do not balance.
inline std::size_t matching_open_paren(std::string_view text, std::size_t close) {
  int depth = 0;
  for (std::size_t i = close + 1; i-- > 0;) {
    if (text[i] == ')') ++depth;
    else if (text[i] == '(' && --depth == 0) return i;
  }
  return std::string_view::npos;
}

// `text` without its template argument lists ("a::B<int>::f<X>" -> "a::B::f").
// '<' inside parentheses (e.g. in "(anonymous namespace)") never occurs, and
// "operator<" does not name a kernel, so plain depth counting is enough.
inline std::string without_template_arguments(std::string_view text) {
  std::string out;
  int depth = 0;
  for (const char c : text) {
    if (c == '<') ++depth;
    else if (c == '>' && depth > 0) --depth;
    else if (depth == 0) out += c;
  }
  return out;
}

// Position just after the last space outside parentheses: where the name
// starts after a return type ("void ns::f" -> 5); 0 when there is none.
inline std::size_t after_return_type(std::string_view text) {
  int depth = 0;
  std::size_t start = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '(') ++depth;
    else if (text[i] == ')') --depth;
    else if (text[i] == ' ' && depth == 0) start = i + 1;
  }
  return start;
}

inline std::string lowercase(std::string_view text) {
  std::string out(text);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}
}  // namespace detail

// The demangled name without return type, template arguments and parameter
// list: "void at::native::vectorized_elementwise_kernel<4, ...>(int, T2, T3)"
// -> "at::native::vectorized_elementwise_kernel". Names that are not C++
// declarations (cuBLAS's "sm90_xmma_gemm_..._cublas", "nvjet_tst_...") come
// back unchanged. Namespaces stay: they tell PyTorch's kernels from ours.
inline std::string base_name(const std::string& demangled) {
  std::string_view text = demangled;
  if (const std::size_t clone = text.find(" [clone"); clone != std::string_view::npos)
    text = text.substr(0, clone);
  // Trailing qualifiers after the parameter list ("... const") are not part of a kernel name.
  const std::size_t close = text.rfind(')');
  if (close != std::string_view::npos && text.find_first_not_of(' ', close + 1) == std::string_view::npos) {
    const std::size_t open = detail::matching_open_paren(text, close);
    if (open != std::string_view::npos && open > 0) text = text.substr(0, open);
  }
  const std::string stripped = detail::without_template_arguments(text);
  const std::size_t start = detail::after_return_type(stripped);
  std::string base = stripped.substr(start);
  return base.empty() ? demangled : base;
}

// One categoriser rule: a kernel whose name contains any of `patterns`
// (case-insensitive substrings) belongs to `category`.
struct CategoryRule {
  std::string category;
  std::vector<std::string> patterns;
};

// Ordered rules, first match wins. A kernel is matched on its base name first
// (so template arguments such as "NormTwoOps" or "normal_kernel" cannot
// mislead), then, when no rule matches the base name, on its full name; no
// match is "other". Copies and memsets are always "memory".
//
// The default order resolves the overlaps deliberately:
//   communication before reduction   ("ncclDevKernel_AllReduce_...")
//   softmax before attention         (a kernel named softmax is softmax, even in attention)
//   attention before gemm            ("fmha_cutlassF_...", "flash_fwd_kernel")
//   gemm before reduction            ("cublasLt::splitKreduce_kernel" is part of a GEMM)
//   elementwise last                 ("add" also occurs inside other names)
class CategoryRules {
 public:
  static CategoryRules defaults() {
    CategoryRules rules;
    rules.rules_ = {
        {"communication", {"nccl"}},
        {"memory", {"memcpy", "memset"}},
        {"softmax", {"softmax"}},
        // dot_do_o / convert_dq: cuDNN's flash backward's rowsum(dO∘O) and dQ cast.
        {"attention", {"attention", "flash", "fmha", "sdpa", "dot_do_o", "convert_dq"}},
        {"gemm", {"gemm", "gemv", "xmma", "cutlass", "matmul", "cublas", "nvjet", "wgmma"}},
        {"norm", {"norm", "rms"}},
        {"reduction", {"reduce", "reduction"}},
        {"elementwise",
         {"elementwise", "silu", "swiglu", "gelu", "relu", "rope", "rotary", "adam", "add", "mul", "scale",
          "embedding", "copy", "fill", "cast", "transpose", "dropout"}},
    };
    return rules;
  }

  static CategoryRules none() { return CategoryRules(); }

  // The user's rule goes first, ahead of every existing one.
  CategoryRules& prepend(CategoryRule rule) {
    rules_.insert(rules_.begin(), std::move(rule));
    return *this;
  }
  // Replaces every rule.
  CategoryRules& replace(std::vector<CategoryRule> rules) {
    rules_ = std::move(rules);
    return *this;
  }
  const std::vector<CategoryRule>& rules() const { return rules_; }

  std::string categorize(ActivityKind kind, const std::string& base, const std::string& full_name) const {
    if (kind != ActivityKind::kernel) return "memory";
    for (const std::string* name : {&base, &full_name}) {
      const std::string lower = detail::lowercase(*name);
      for (const CategoryRule& rule : rules_)
        for (const std::string& pattern : rule.patterns)
          if (!pattern.empty() && lower.find(detail::lowercase(pattern)) != std::string::npos)
            return rule.category;
    }
    return "other";
  }
  std::string categorize(const KernelRecord& record) const {
    return categorize(record.kind, record.base_name, record.name);
  }

 private:
  std::vector<CategoryRule> rules_;
};

// The categories of the default rules, in the order reports list them.
inline const std::vector<std::string>& kernel_categories() {
  static const std::vector<std::string> categories = {
      "gemm", "attention", "softmax", "norm", "reduction", "elementwise", "memory", "communication", "other"};
  return categories;
}

// Fills name, base_name and category of `record` from a raw (possibly
// mangled) kernel name. Copies and memsets keep their descriptive name.
inline void name_record(KernelRecord& record, const std::string& raw_name, const CategoryRules& rules) {
  record.name = record.kind == ActivityKind::kernel ? demangle(raw_name) : raw_name;
  record.base_name = record.kind == ActivityKind::kernel ? base_name(record.name) : record.name;
  record.category = rules.categorize(record);
}

GPUPROF_NAMESPACE_END
