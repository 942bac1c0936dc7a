// validate_fields(): every rule a ModelConfig's fields must satisfy, all violations at once
// (validate() adds count's rule, src/count/accept.cpp).
#include <algorithm>
#include <cmath>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "config/validate_fields.hpp"
#include "smelt/config.hpp"
#include "smelt/detail/bounds.hpp"
#include "smelt/detail/violations.hpp"
#include "smelt/error.hpp"

namespace smelt {
namespace {

// The bounds (smelt/detail/bounds.hpp) keep every product in the counts inside 64-bit
// integers for all realistic models; count's checked count catches the rest.
using detail::kMaxContext;
using detail::kMaxExperts;
using detail::kMaxKvBytes;
using detail::kMaxLayers;
using detail::kMaxLoops;
using detail::kMaxWidth;

using detail::Violations;

void check_attention(const ModelConfig& c, Violations& v) {
  const auto& a = c.attention;
  v.range("attention.num_heads", a.num_heads, 1, kMaxWidth);
  if (a.type == AttentionType::gqa) {
    v.range("attention.num_kv_heads", a.num_kv_heads, 1, kMaxWidth);
    v.range("attention.head_dim", a.head_dim, 1, kMaxWidth);
    if (a.num_heads > 0 && a.num_kv_heads > 0 && a.num_heads % a.num_kv_heads != 0)
      v.add("attention.num_kv_heads", fmt::format("{}", a.num_kv_heads),
            fmt::format("must divide attention.num_heads = {}", a.num_heads));
    if (a.qk_bias && a.qkv_bias)
      v.add("attention.qk_bias", "true", "not with attention.qkv_bias, which biases q and k already");
  } else {
    const auto& m = a.mla;
    v.range("attention.q_lora_rank", m.q_lora_rank, 0, kMaxWidth);
    v.range("attention.kv_lora_rank", m.kv_lora_rank, 1, kMaxWidth);
    v.range("attention.qk_nope_head_dim", m.qk_nope_head_dim, 0, kMaxWidth);
    v.range("attention.qk_rope_head_dim", m.qk_rope_head_dim, 0, kMaxWidth);
    v.range("attention.v_head_dim", m.v_head_dim, 1, kMaxWidth);
    // MLA's projections carry no biases and its norms sit on the latents (counted), so these
    // switches would be silently ignored: refuse them instead.
    if (a.qkv_bias) v.add("attention.qkv_bias", "true", "not supported with attention.type = \"mla\"");
    if (a.qk_bias) v.add("attention.qk_bias", "true", "not supported with attention.type = \"mla\"");
    if (a.qk_norm != QkNorm::none)
      v.add("attention.qk_norm", fmt::format("\"{}\"", to_string(a.qk_norm)),
            "must be \"none\" with attention.type = \"mla\"");
    if (m.qk_nope_head_dim + m.qk_rope_head_dim <= 0 && m.qk_nope_head_dim >= 0 && m.qk_rope_head_dim >= 0)
      v.add("attention.qk_nope_head_dim + attention.qk_rope_head_dim", "0", "must be positive");
  }
  if (a.pattern.empty())
    v.add("attention.pattern", "[]", "must list at least one layer kind");
  else if (static_cast<std::int64_t>(a.pattern.size()) > c.num_layers && c.num_layers > 0)
    v.add(fmt::format("attention.pattern has {} entries: must have at most num_layers = {}", a.pattern.size(),
                      c.num_layers));
  const auto uses = [&](LayerAttention k) {
    return std::find(a.pattern.begin(), a.pattern.end(), k) != a.pattern.end();
  };
  if (uses(LayerAttention::sliding))
    v.range("attention.window", a.window, 1, kMaxContext);
  else if (a.window != 0)
    v.add("attention.window", fmt::format("{}", a.window), "must be 0 when attention.pattern has no \"sliding\" layer");
  if (uses(LayerAttention::chunked))
    v.range("attention.chunk", a.chunk, 1, kMaxContext);
  else if (a.chunk != 0)
    v.add("attention.chunk", fmt::format("{}", a.chunk), "must be 0 when attention.pattern has no \"chunked\" layer");
}

// The routing choices (RouterForm, renormalize, clamped_swiglu): each form's own scores and bias.
void check_routing(const ModelConfig& c, Violations& v) {
  const auto& m = c.moe;
  const auto form = [&] { return fmt::format("\"{}\"", to_string(m.router_form)); };
  if (m.router_form == RouterForm::plain && m.router_score != RouterScore::softmax)
    v.add("moe.router_form", form(),
          "routes softmax scores only: with moe.router_score \"sigmoid\" use \"deepseek\" or \"llama4\"");
  if (m.router_form == RouterForm::deepseek && m.router_score == RouterScore::softmax && !m.router_bias)
    v.add("moe.router_form", form(),
          "without moe.router_bias, softmax scores route as \"plain\" (the same choice and weights): say \"plain\"");
  if (m.router_form == RouterForm::llama4 && (m.router_score != RouterScore::sigmoid || m.router_bias || m.renormalize))
    v.add("moe.router_form", form(),
          fmt::format("needs moe.router_score \"sigmoid\", moe.router_bias false and moe.renormalize false (Llama 4's "
                      "router; they are \"{}\", {}, {})",
                      to_string(m.router_score), m.router_bias, m.renormalize));
  if (!m.clamped_swiglu) return;
  const auto positive = [&](std::string_view key, double x) {
    if (!(std::isfinite(x) && x > 0))
      v.add(fmt::format("moe.clamped_swiglu.{}", key), fmt::format("{}", x), "must be a finite number above 0");
  };
  positive("alpha", m.clamped_swiglu->alpha);
  positive("limit", m.clamped_swiglu->limit);
  if (c.ffn.type != FfnType::gated) v.add("moe.clamped_swiglu", "", "needs ffn.type \"gated\" (a SwiGLU to clamp)");
}

void check_moe(const ModelConfig& c, Violations& v) {
  const auto& m = c.moe;
  v.range("moe.num_experts", m.num_experts, 1, kMaxExperts);
  v.range("moe.top_k", m.top_k, 1, kMaxExperts);
  if (m.num_experts > 0 && m.top_k > m.num_experts)
    v.add("moe.top_k", fmt::format("{}", m.top_k), fmt::format("must be at most moe.num_experts = {}", m.num_experts));
  v.range("moe.expert_width", m.expert_width, 1, kMaxWidth);
  v.range("moe.num_shared_experts", m.num_shared_experts, 0, kMaxExperts);
  if (m.num_shared_experts > 0)
    v.range("moe.shared_width", m.shared_width, 1, kMaxWidth);
  else if (m.shared_width != 0 || m.shared_gate)
    v.add("moe.shared_width", fmt::format("{}, moe.shared_gate = {}", m.shared_width, m.shared_gate),
          "must be 0 and false without shared experts");
  check_routing(c, v);
  if (!m.layers.empty()) {
    std::set<std::int64_t> seen;
    for (std::size_t i = 0; i < m.layers.size(); ++i) {
      const auto layer = m.layers[i];
      if (layer < 1 || layer > c.num_layers)
        v.add(fmt::format("moe.layers[{}]", i), fmt::format("{}", layer),
              fmt::format("must be a 1-based layer in 1..{}", c.num_layers));
      else if (!seen.insert(layer).second)
        v.add(fmt::format("moe.layers[{}]", i), fmt::format("{}", layer), "listed twice");
    }
  } else {
    v.range("moe.layers.first_dense", m.first_dense, 0, std::max<std::int64_t>(c.num_layers - 1, 0));
    v.range("moe.layers.every", m.every, 1, std::max<std::int64_t>(c.num_layers, 1));
    if (m.every > 0) v.range("moe.layers.phase", m.phase, 0, m.every - 1);
  }
}

// A span's field name ("loop.count" for a config's single span, "loops[2].count" for one of several), built
// only for a violation: validation runs once per solver candidate.
struct SpanField {
  std::size_t index;
  bool one;
  std::string operator()(std::string_view key) const {
    return one ? fmt::format("loop{}", key) : fmt::format("loops[{}]{}", index, key);
  }
};

// Violations::range() on the span's field `key`, its name built only for a violation.
void in_range(Violations& v, const SpanField& name, std::string_view key, std::int64_t value, std::int64_t lo,
              std::int64_t hi) {
  if (value < lo || value > hi) v.range(name(key), value, lo, hi);
}

// A span's per-visit LoRA: a rank with targets, each target a projection the
// span's layers have, the rank at most the projection's smaller side.
void check_lora(const ModelConfig& c, const LoopConfig& l, const SpanField& name, Violations& v) {
  in_range(v, name, ".lora_rank", l.lora_rank, 0, kMaxWidth);
  if (l.lora_rank > 0 && l.lora_targets.empty())
    v.add(name(".lora_targets"), "[]", fmt::format("must name the projections a rank of {} adapts", l.lora_rank));
  if (l.lora_rank == 0 && !l.lora_targets.empty())
    v.add(name(".lora_rank"), "0", "must be positive, since lora_targets are given");
  std::set<LoraTarget> seen;
  for (std::size_t i = 0; i < l.lora_targets.size(); ++i) {
    const LoraTarget t = l.lora_targets[i];
    const std::string field = name(fmt::format(".lora_targets[{}]", i));
    const std::string word = fmt::format("\"{}\"", to_string(t));
    const bool ffn = t == LoraTarget::gate || t == LoraTarget::up || t == LoraTarget::down;
    if (!seen.insert(t).second) {
      v.add(field, word, "listed twice");
    } else if (!ffn && c.attention.type == AttentionType::mla) {
      v.add(field, word, "not with attention.type = \"mla\" (its projections are not q, k, v)");
    } else if (ffn && t == LoraTarget::gate && c.ffn.type == FfnType::plain) {
      v.add(field, word, "a plain FFN has no gate");
    } else if (l.lora_rank > 0) {
      bool moe = false;
      for (std::int64_t layer = l.first - 1; ffn && layer >= 0 && layer < std::min(l.last, c.num_layers); ++layer)
        moe = moe || c.is_moe_layer(layer);
      const ProjectionShape s = projection_shape(c, t);
      if (moe)
        v.add(field, word, "needs dense layers: the span holds MoE layers, whose experts this LoRA does not adapt");
      else if (l.lora_rank > std::min(s.in, s.out))
        v.add(name(".lora_rank"), fmt::format("{}", l.lora_rank),
              fmt::format("must be at most {}, the smaller side of {} ({} -> {})", std::min(s.in, s.out), to_string(t),
                          s.in, s.out));
    }
  }
}

// One span; `name` is its field ("loop" for a config's single span, "loops[i]" for one of several).
void check_span(const ModelConfig& c, const LoopConfig& l, const SpanField& name, Violations& v) {
  in_range(v, name, ".count", l.count, 1, kMaxLoops);
  if (!(std::isfinite(l.residual_scale) && l.residual_scale > 0))
    v.add(name(".residual_scale"), fmt::format("{}", l.residual_scale), "must be a positive finite number");
  if (l.first == 0 && l.last == 0 && l.count == 1) return;  // no loop
  if (l.first < 1 || l.last > c.num_layers || l.first > l.last)
    v.add(name(".span"), fmt::format("\"{}\"", format_span(l)),
          fmt::format("must satisfy 1 <= first <= last <= num_layers = {}", c.num_layers));
  in_range(v, name, ".backprop_passes", l.backprop_passes, 0, std::max<std::int64_t>(l.count, 0));
  check_lora(c, l, name, v);
  const bool active = l.kv_policy == KvPolicy::active;
  if (active && static_cast<std::int64_t>(l.kv_keep.size()) != l.count)
    v.add(name(".kv_keep"), fmt::format("[{}]", fmt::join(l.kv_keep, ", ")),
          fmt::format("must give one fraction per pass (count = {}) with kv_policy = \"active\"", l.count));
  if (!active && !l.kv_keep.empty())
    v.add(name(".kv_keep"), fmt::format("[{}]", fmt::join(l.kv_keep, ", ")), "only with kv_policy = \"active\"");
  for (std::size_t i = 0; i < l.kv_keep.size(); ++i)
    if (!(l.kv_keep[i] > 0 && l.kv_keep[i] <= 1))
      v.add(name(fmt::format(".kv_keep[{}]", i)), fmt::format("{}", l.kv_keep[i]), "must be in (0, 1]");
  if (l.norm_after && l.norm_each_pass)
    v.add(name(".norm_after"), "true", "not with norm_each_pass, which norms after every pass already");
  // The final norm and the exit gate read the model's output: the span must end at the last layer.
  for (const auto& [set, key] : {std::pair{l.norm_each_pass, "norm_each_pass"}, std::pair{l.exit_gate, "exit_gate"}})
    if (set && l.last != c.num_layers)
      v.add(name(fmt::format(".{}", key)), "true",
            fmt::format("needs a span that ends at the last layer ({}), not \"{}\"", c.num_layers, format_span(l)));
}

void check_loop(const ModelConfig& c, Violations& v) {
  const bool one = c.loops.size() == 1;
  for (std::size_t i = 0; i < c.loops.size(); ++i) check_span(c, c.loops[i], SpanField{i, one}, v);
  // Spans run in the order listed: each must start after the one before ends.
  for (std::size_t i = 1; i < c.loops.size(); ++i) {
    const LoopConfig& a = c.loops[i - 1];
    const LoopConfig& b = c.loops[i];
    if (a.first > 0 && b.first > 0 && b.first <= a.last)
      v.add(fmt::format("loops[{}].span", i), fmt::format("\"{}\"", format_span(b)),
            fmt::format("must start after loops[{}].span \"{}\" ends: spans are disjoint and in layer order", i - 1,
                        format_span(a)));
  }
}

void check_dense_width(const ModelConfig& c, Violations& v) {
  bool any_dense = false;
  if (c.is_moe() && c.moe.layers.empty() && c.moe.every >= 1 && c.num_layers >= 2)
    // Layers 0 and 1 have different residues mod every >= 2, and with every = 1
    // a layer is MoE only for phase 0: answered without a pass over the layers
    // (validation runs once per solver candidate).
    any_dense = c.moe.first_dense > 0 || c.moe.every >= 2 || c.moe.phase != 0;
  else
    for (std::int64_t i = 0; i < c.num_layers && !any_dense; ++i) any_dense = !c.is_moe_layer(i);
  if (any_dense || c.ffn.dense_width != 0) {
    if (any_dense && c.ffn.dense_width <= 0)
      v.add("ffn.dense_width", fmt::format("{}", c.ffn.dense_width), "must be positive, since some layers are dense");
    else
      v.range("ffn.dense_width", c.ffn.dense_width, 0, kMaxWidth);
  }
}

}  // namespace

namespace config_detail {

using namespace smelt::detail;  // the helpers every module shares

void validate_fields(const ModelConfig& c) {
  Violations v;
  v.range("vocab_size", c.vocab_size, 1, kMaxWidth);
  v.range("num_layers", c.num_layers, 1, kMaxLayers);
  v.range("hidden_size", c.hidden_size, 1, kMaxWidth);
  v.range("context_length", c.context_length, 1, kMaxContext);
  v.range("kv_cache_bytes", c.kv_cache_bytes, 1, kMaxKvBytes);
  v.range("mtp_modules", c.mtp_modules, 0, kMaxLayers);
  check_attention(c, v);
  if (c.is_moe() || c.moe.top_k != 0 || c.moe.expert_width != 0) check_moe(c, v);
  check_loop(c, v);
  if (c.num_layers > 0 && c.num_layers <= kMaxLayers) check_dense_width(c, v);
  v.throw_if_any();
}

}  // namespace config_detail

}  // namespace smelt
