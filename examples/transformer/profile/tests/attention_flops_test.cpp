// profile/tests/attention_flops_test.cpp: the FLOP counts of question (e) and
// the residual-stream size of the memory table, against numbers worked out by hand.
#include <doctest/doctest.h>

#include "model/config.hpp"
#include "profile/attention_flops.hpp"
#include "profile/profile_results.hpp"

using namespace transformer;
using namespace transformer::profile;

TEST_CASE("attention FLOPs of the small model at batch 4, ctx 512") {
  const ModelConfig small = *named_size("small");  // 12 layers, 12 heads, d_head 64
  const AttentionFlops flops = attention_flops(small, 4, 512);
  const double scores_per_layer = 4.0 * 12 * 512 * 512;          // 12,582,912
  CHECK(flops.scores_matmul == 2 * scores_per_layer * 64 * 12);  // 19,327,352,832
  CHECK(flops.scores_matmul == 19327352832.0);
  CHECK(flops.final_matmul == flops.scores_matmul);
  CHECK(flops.softmax == 5 * scores_per_layer * 12);
  // The FLOP ratio does not depend on the context: 5 / (4 d_head).
  CHECK(flops.softmax_to_matmuls() == doctest::Approx(5.0 / 256));
  CHECK(attention_flops(small, 4, 128).softmax_to_matmuls() == doctest::Approx(5.0 / 256));
}

TEST_CASE("attention FLOPs of 2.7B at ctx 1024 do not overflow") {
  const ModelConfig model = *named_size("2.7B");  // 32 layers, 32 heads, d_head 80
  const AttentionFlops flops = attention_flops(model, 4, 1024);
  CHECK(flops.scores_matmul == 2.0 * 4 * 32 * 1024 * 1024 * 80 * 32);
  CHECK(flops.softmax_to_matmuls() == doctest::Approx(5.0 / 320));
}

TEST_CASE("one fp32 residual-stream tensor of 2.7B is 5/10/20 MiB at ctx 128/256/512 (docs/model.md)") {
  const int d_model = named_size("2.7B")->d_model;
  constexpr std::size_t mib = 1024 * 1024;
  CHECK(residual_stream_bytes(4, 128, d_model) == 5 * mib);
  CHECK(residual_stream_bytes(4, 256, d_model) == 10 * mib);
  CHECK(residual_stream_bytes(4, 512, d_model) == 20 * mib);
}
