// cpu/tests/config_test.cpp: model/config.cpp and model/backend.cpp (sizes,
// validation, parameter layout and counts, enum names, the OOM message).
#include <cmath>

#include "model/backend.hpp"
#include "model/config.hpp"
#include <doctest/doctest.h>

namespace transformer {
namespace {

TEST_CASE("parameter counts reproduce docs/model.md's table") {
  // docs/model.md, in millions, rounded to 0.1 M.
  const std::pair<const char*, double> table[] = {
      {"small", 128.6}, {"medium", 423.2}, {"large", 969.4}, {"xl", 1998.2}, {"2.7B", 3406.8}};
  for (const auto& [name, millions] : table) {
    const ModelConfig config = *named_size(name);
    const std::size_t count = parameter_count(config);
    CHECK_MESSAGE(std::abs(static_cast<double>(count) / 1e6 - millions) < 0.05, name << ": " << count);
    // The layout is built tensor by tensor, the count from a closed formula.
    CHECK(ParameterLayout(config).total == count);
  }
  CHECK(parameter_count(*named_size("small")) == 128625408u);  // 2·V·d + L·(4d² + 3d·dff + 2d) + d
}

TEST_CASE("named sizes") {
  CHECK(size_names() == std::vector<std::string>{"tiny", "small", "medium", "large", "xl", "2.7B"});
  const ModelConfig tiny = *named_size("tiny");
  CHECK(tiny.d_model == 64);
  CHECK(tiny.heads == 4);
  CHECK(tiny.d_ff == 128);
  CHECK(tiny.layers == 3);
  CHECK(tiny.vocab == 10000);
  CHECK(named_size("2.7B")->d_head() == 80);
  CHECK(named_size("xl")->d_head() == 64);
  CHECK_FALSE(named_size("huge").has_value());
  for (const std::string& name : size_names()) CHECK_NOTHROW(named_size(name)->validate());
}

TEST_CASE("validate names the bad dimension") {
  ModelConfig config = *named_size("tiny");
  config.heads = 5;
  CHECK_THROWS_WITH_AS(config.validate(), doctest::Contains("divisible"), std::invalid_argument);
  config.heads = 64;  // d_head 1: RoPE needs pairs
  CHECK_THROWS_WITH_AS(config.validate(), doctest::Contains("even"), std::invalid_argument);
  config = *named_size("tiny");
  config.vocab = 0;
  CHECK_THROWS_WITH_AS(config.validate(), doctest::Contains("vocab"), std::invalid_argument);
  config = *named_size("tiny");
  config.layers = -1;
  CHECK_THROWS_WITH_AS(config.validate(), doctest::Contains("layers"), std::invalid_argument);
  config = *named_size("tiny");
  config.heads = 0;
  CHECK_THROWS_WITH_AS(config.validate(), doctest::Contains("heads"), std::invalid_argument);
}

TEST_CASE("parameter layout follows the documented order, contiguous") {
  const ModelConfig config = *named_size("tiny");
  const ParameterLayout layout(config);
  const std::vector<std::string> block = {"norm1", "wq", "wk", "wv", "wo", "norm2", "w1", "w3", "w2"};
  std::vector<std::string> expected = {"emb"};
  for (int layer = 0; layer < config.layers; ++layer)
    for (const std::string& name : block) expected.push_back("blocks." + std::to_string(layer) + "." + name);
  expected.push_back("final_norm");
  expected.push_back("lm_head");
  REQUIRE(layout.tensors.size() == expected.size());
  std::size_t offset = 0;
  for (std::size_t i = 0; i < expected.size(); ++i) {
    CHECK(layout.tensors[i].name == expected[i]);
    CHECK(layout.tensors[i].offset == offset);
    offset += layout.tensors[i].size();
  }
  CHECK(layout.total == offset);

  const BlockOffsets at(config);
  for (int layer = 0; layer < config.layers; ++layer) {
    const std::size_t base = layout.block_offset(layer);
    const std::string prefix = "blocks." + std::to_string(layer) + ".";
    CHECK(layout.find(prefix + "wq").offset == base + at.wq);
    CHECK(layout.find(prefix + "wk").offset == base + at.wk);
    CHECK(layout.find(prefix + "wv").offset == base + at.wv);
    CHECK(layout.find(prefix + "wo").offset == base + at.wo);
    CHECK(layout.find(prefix + "norm2").offset == base + at.norm2);
    CHECK(layout.find(prefix + "w1").offset == base + at.w1);
    CHECK(layout.find(prefix + "w3").offset == base + at.w3);
    CHECK(layout.find(prefix + "w2").offset == base + at.w2);
    CHECK(layout.find(prefix + "w2").offset + layout.find(prefix + "w2").size() == base + at.size);
  }
  const ParamTensor& w2 = layout.find("blocks.1.w2");
  CHECK(w2.rows == config.d_model);
  CHECK(w2.cols == config.d_ff);
  CHECK(w2.init_std == doctest::Approx(std::sqrt(2.0 / (64 + 128))));
  CHECK(layout.find("emb").init_std == 1.0);
  CHECK(layout.find("final_norm").kind == ParamKind::norm_gain);
  CHECK_THROWS_AS(layout.find("blocks.9.wq"), std::out_of_range);
}

TEST_CASE("forward FLOPs count the matrix products") {
  ModelConfig config;
  config.vocab = 10;
  config.d_model = 4;
  config.d_ff = 6;
  config.layers = 2;
  config.heads = 2;
  // N = 3·5 tokens. Per layer: q,k,v,o 2·N·4·16 = 1920; ffn 2·N·4·18 = 2160;
  // q·kᵀ and p·v 2·(2·N·5·4) = 1200. Head 2·N·4·10 = 1200.
  CHECK(forward_flops(config, 3, 5) == doctest::Approx(2 * (1920 + 2160 + 1200) + 1200));
}

TEST_CASE("precision, mode and attention names round-trip") {
  for (Precision p : {Precision::fp32, Precision::tf32, Precision::bf16})
    CHECK(parse_precision(to_string(p)) == p);
  for (Mode m : {Mode::fwd, Mode::fwdbwd, Mode::step}) CHECK(parse_mode(to_string(m)) == m);
  CHECK_FALSE(parse_precision("fp16").has_value());
  CHECK_FALSE(parse_mode("train").has_value());
  for (Attention a : {Attention::naive, Attention::fused, Attention::cudnn})
    CHECK(parse_attention(to_string(a)) == a);
  CHECK_FALSE(parse_attention("flash").has_value());
  const ModelConfig small = *named_size("small"), tiny = *named_size("tiny");  // d_head 64, 16
  CHECK(default_attention(Precision::bf16, small, 512, false) == Attention::fused);
  CHECK(default_attention(Precision::bf16, small, 512, true) == Attention::cudnn);
  // Short contexts with 64-wide heads: our kernels, measured faster there.
  CHECK(default_attention(Precision::bf16, small, 128, true) == Attention::fused);
  CHECK(default_attention(Precision::bf16, small, kFusedDefaultMaxCtx, true) == Attention::fused);
  CHECK(default_attention(Precision::bf16, small, kFusedDefaultMaxCtx + 1, true) == Attention::cudnn);
  CHECK(default_attention(Precision::bf16, *named_size("2.7B"), 128, true) == Attention::cudnn);  // d_head 80
  for (bool cudnn : {false, true}) {
    CHECK(default_attention(Precision::fp32, small, 128, cudnn) == Attention::naive);
    CHECK(default_attention(Precision::tf32, small, 512, cudnn) == Attention::naive);
  }
  CHECK(default_attention(Precision::bf16, tiny, 128, false) == Attention::naive);  // no kernel for d_head 16
  CHECK(default_attention(Precision::bf16, tiny, 128, true) == Attention::cudnn);   // cuDNN takes 16
  ModelConfig d_head_12 = small;
  d_head_12.heads = 64;  // 768 / 64
  CHECK_FALSE(cudnn_attention_supports(d_head_12));
  CHECK(default_attention(Precision::bf16, d_head_12, 512, true) == Attention::naive);
  CHECK(fused_attention_supports(*named_size("2.7B")));  // d_head 80
}

TEST_CASE("cuDNN version numbers read as major.minor.patch in both numbering schemes") {
  CHECK(cudnn_version_text(91400) == "9.14.0");
  CHECK(cudnn_version_text(90100) == "9.1.0");
  CHECK(cudnn_version_text(91902) == "9.19.2");
  CHECK(cudnn_version_text(8902) == "8.9.2");
  CHECK(cudnn_version_text(8100) == "8.1.0");
}

TEST_CASE("OutOfMemory says how much was needed and free, in GiB") {
  const OutOfMemory oom(std::size_t(3) << 30, std::size_t(1) << 29);
  CHECK(oom.bytes_requested == std::size_t(3) << 30);
  CHECK(oom.bytes_free == std::size_t(1) << 29);
  CHECK(std::string(oom.what()).find("3.00 GiB") != std::string::npos);
  CHECK(std::string(oom.what()).find("0.50 GiB free") != std::string::npos);
}

}  // namespace
}  // namespace transformer
