// The benchmark plan (which blocks one run executes and their exact analytic
// FLOPs), and the seeded weights and inputs that every backend builds the same
// way, so that a CUDA run can be checked against the CPU reference.
#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <stdexcept>

#include <fmt/format.h>

#include "smelt/bench_plan.hpp"
#include "smelt/bench_weights.hpp"
#include "smelt/count.hpp"
#include "smelt/detail/violations.hpp"
#include "smelt/error.hpp"
#include "smelt/schedule.hpp"
#include "util/checked.hpp"
#include "util/mention.hpp"
#include "util/option_bounds.hpp"

namespace smelt {
namespace {

using i64 = std::int64_t;
using detail::add;
using detail::mul;

// The time bound covers one run; these keep the number of runs and visits
// from making it meaningless (docs/bench.md).
constexpr i64 kMaxVisits = i64{1} << 20;

void check_options(const ModelConfig& c, const BenchOptions& o, i64 tokens, i64 context) {
  detail::Violations errors;
  if (o.tokens < 0) errors.add("BenchOptions::tokens", fmt::format("{}", o.tokens), "must be positive");
  if (o.context < 0)
    errors.add("BenchOptions::context", fmt::format("{}", o.context), "must be positive");
  else if (o.context > c.context_length)
    errors.add("BenchOptions::context", fmt::format("{}", o.context),
               fmt::format("must be at most the config's context_length = {}", c.context_length));
  // A defaulted context divides the tokens unless the tokens exceed the config's context.
  if (errors.empty() && tokens % context != 0)
    errors.add(
        "BenchOptions::tokens", fmt::format("{}", tokens),
        fmt::format("must be a multiple of {}", detail::mention("BenchOptions::context", fmt::format("{}", context))));
  // The float32 runs scale looped updates by it: it must be a float.
  for (std::size_t i = 0; i < c.loops.size(); ++i)
    if (c.loops[i].residual_scale > std::numeric_limits<float>::max())
      errors.add(
          c.loops.size() == 1 ? std::string("loop.residual_scale") : fmt::format("loops[{}].residual_scale", i),
          fmt::format("{}", c.loops[i].residual_scale),
          fmt::format("the benchmark runs in float32, so it must be at most {}", std::numeric_limits<float>::max()));
  detail::check_integer(o, "warmup", errors);
  detail::check_integer(o, "repetitions", errors);
  // Every visit runs for real and is listed in the plan: bound them before listing.
  if (const i64 visits = schedule(c).executed_layers(); visits > kMaxVisits)
    errors.add(fmt::format("the config executes {} layers per token: the benchmark runs at most {} block visits",
                           visits, kMaxVisits));
  errors.throw_if_any();
}

// Exact integers throughout: a double sum of per-visit doubles could round,
// and the reference's accounted count is compared with == .
void add_analytic(LayerPlan& plan) {
  const CostReport report = count(plan.config, {.context_length = plan.context});
  i64 all = 0;
  i64 gemm = 0;
  for (const i64 layer : plan.visits) {
    const LayerCost& l = report.layers[static_cast<std::size_t>(layer)];
    i64 matmul = l.matmul_flops_per_visit;
    i64 scores = mul(mul(l.score_flops_per_pair, l.attended_pairs, "score FLOPs"), plan.sequences, "score FLOPs");
    if (plan.moe_only) {
      // The projection terms are exact integers held in doubles (2 x an int64 product).
      matmul -= static_cast<i64>(l.flops_per_visit.attention_qkv + l.flops_per_visit.attention_out);
      scores = 0;
    }
    const i64 visit = mul(matmul, plan.tokens, "GEMM FLOPs");
    gemm = add(gemm, visit, "GEMM FLOPs");
    all = add(all, add(visit, scores, "FLOPs"), "FLOPs");
  }
  plan.analytic_flops = static_cast<double>(all);
  plan.analytic_gemm_flops = static_cast<double>(gemm);
}

// Per token, in bytes (bench_reference.cpp holds these): the float32 input;
// two runs' float64 outputs and expert choices (the kept run and the one being
// made); the float64 residual stream; and the largest sublayer working set:
// attention Q, K, V, the heads and the projected output; MoE router scores,
// choices, mixing weights and slots, the combined output, one expert's rows in
// and out and its two hidden activations (or a shared expert's, on every
// token); a dense FFN's two hidden activations and output.
void add_activation_bytes(LayerPlan& plan) {
  const ModelConfig& c = plan.config;
  const i64 h = c.hidden_size;
  const auto& a = c.attention;
  const auto& m = c.moe;
  i64 moe_visits = 0;
  bool dense = false;
  for (const i64 layer : plan.visits) {
    const bool moe = c.is_moe_layer(layer);
    moe_visits += moe ? 1 : 0;
    dense = dense || !moe;
  }
  const i64 q = mul(a.num_heads, a.head_dim, "activation bytes");
  const i64 kv = mul(a.num_kv_heads, a.head_dim, "activation bytes");
  i64 work = 0;  // float64 elements
  if (!plan.moe_only) work = std::max(work, 2 * q + 2 * kv + h);
  if (moe_visits > 0)
    work = std::max(work, m.num_experts + m.top_k + 3 * h + 2 * std::max(m.expert_width, m.shared_width) + 2 * m.top_k);
  if (dense) work = std::max(work, 2 * c.ffn.dense_width + h);
  const i64 routing = mul(mul(2 * 8, m.top_k, "activation bytes"), moe_visits, "activation bytes");
  const i64 per_token = add(4 * h + 2 * 8 * h + 8 * h + 8 * work, routing, "activation bytes");
  plan.activation_bytes = mul(per_token, plan.tokens, "activation bytes");
}

// Independent streams per purpose: the input is stream 0, layer l's attention
// 2l + 1 and its FFN 2l + 2, so --moe-only runs see the same FFN weights as full
// blocks. The odd multiplier (2^64 / golden ratio) spreads nearby streams apart.
std::uint64_t stream_seed(std::uint64_t seed, std::uint64_t stream) {
  return seed ^ (0x9E3779B97F4A7C15ULL * (stream + 1));
}

// rows x cols row-major, drawn in storage order from U(-1/sqrt(fan_in), 1/sqrt(fan_in)).
std::vector<float> draw(std::mt19937_64& rng, i64 rows, i64 cols, i64 fan_in) {
  const float bound = static_cast<float>(1.0 / std::sqrt(static_cast<double>(fan_in)));
  std::uniform_real_distribution<float> dist(-bound, bound);
  std::vector<float> out(static_cast<std::size_t>(rows * cols));
  for (float& v : out) v = dist(rng);
  return out;
}

// Draw order within one FFN: gate (gated FFNs only), up, down.
LayerWeights::Ffn draw_ffn(std::mt19937_64& rng, const ModelConfig& c, i64 width) {
  const i64 h = c.hidden_size;
  LayerWeights::Ffn f;
  if (c.ffn.type == FfnType::gated) f.gate = draw(rng, h, width, h);
  f.up = draw(rng, h, width, h);
  f.down = draw(rng, width, h, width);
  return f;
}

}  // namespace

LayerPlan make_layer_plan(const ModelConfig& config, const BenchOptions& options) {
  validate(config);
  if (config.attention.type == AttentionType::mla)
    throw config_error("attention.type = \"mla\": not supported by the benchmark yet");
  const i64 requested = options.tokens > 0 ? options.tokens : 0;
  const i64 context = options.context > 0
                          ? options.context
                          : std::min(config.context_length, requested > 0 ? requested : config.context_length);
  const i64 tokens = requested > 0 ? requested : context;
  check_options(config, options, tokens, context);

  LayerPlan plan;
  plan.config = config;
  plan.tokens = tokens;
  plan.context = context;
  plan.sequences = tokens / context;
  plan.moe_only = options.moe_only;
  for (const LayerVisit& v : schedule(config).visits()) plan.visits.push_back(v.layer);
  try {
    add_analytic(plan);
    add_activation_bytes(plan);
  } catch (const detail::overflow& e) {
    throw overflow_error(Violation("BenchOptions::tokens", fmt::format("{}", tokens),
                                   fmt::format("{} of one run overflow 64-bit integers", e.quantity())));
  }
  return plan;
}

// Draw order: the attention stream gives wq, wk, wv, wo; the FFN stream gives
// the router, then each routed expert in index order, then each shared expert
// (gate, up, down each), then the shared gate; a dense layer draws one FFN.
LayerWeights make_layer_weights(const LayerPlan& plan, std::int64_t layer, std::uint64_t seed) {
  const ModelConfig& c = plan.config;
  if (layer < 0 || layer >= c.num_layers)
    throw std::out_of_range(fmt::format("make_layer_weights: layer {} outside 0..{}", layer, c.num_layers - 1));
  const i64 h = c.hidden_size;
  const i64 q = c.attention.num_heads * c.attention.head_dim;
  const i64 kv = c.attention.num_kv_heads * c.attention.head_dim;
  const auto stream = static_cast<std::uint64_t>(layer) * 2;
  LayerWeights w;
  if (!plan.moe_only) {
    std::mt19937_64 rng(stream_seed(seed, stream + 1));
    w.wq = draw(rng, h, q, h);
    w.wk = draw(rng, h, kv, h);
    w.wv = draw(rng, h, kv, h);
    w.wo = draw(rng, q, h, q);
  }
  std::mt19937_64 rng(stream_seed(seed, stream + 2));
  if (!c.is_moe_layer(layer)) {
    w.dense = draw_ffn(rng, c, c.ffn.dense_width);
    return w;
  }
  const auto& m = c.moe;
  w.router = draw(rng, h, m.num_experts, h);
  for (i64 e = 0; e < m.num_experts; ++e) w.experts.push_back(draw_ffn(rng, c, m.expert_width));
  for (i64 s = 0; s < m.num_shared_experts; ++s) w.shared.push_back(draw_ffn(rng, c, m.shared_width));
  if (m.shared_gate) w.shared_gate = draw(rng, h, 1, h);
  return w;
}

std::vector<float> make_input(const LayerPlan& plan, std::uint64_t seed) {
  std::mt19937_64 rng(stream_seed(seed, 0));
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> x(static_cast<std::size_t>(plan.tokens * plan.config.hidden_size));
  for (float& v : x) v = dist(rng);
  return x;
}

}  // namespace smelt
