// Layer queries on ModelConfig and the 1-based span syntax.
#include <algorithm>
#include <iterator>

#include <fmt/format.h>

#include "smelt/config.hpp"
#include "smelt/detail/excerpt.hpp"
#include "smelt/detail/parse_number.hpp"
#include "smelt/error.hpp"

namespace smelt {

bool ModelConfig::is_moe_layer(std::int64_t layer) const {
  if (!is_moe()) return false;
  if (!moe.layers.empty()) return std::find(moe.layers.begin(), moe.layers.end(), layer + 1) != moe.layers.end();
  return layer >= moe.first_dense && moe.every > 0 && layer % moe.every == moe.phase;
}

LayerAttention ModelConfig::attention_at(std::int64_t layer) const {
  const auto& p = attention.pattern;
  if (p.empty()) return LayerAttention::full;
  return p[static_cast<std::size_t>(layer % static_cast<std::int64_t>(p.size()))];
}

const LoopConfig* ModelConfig::loop_of(std::int64_t layer) const {
  // Spans are disjoint and in layer order once validated: the last that starts at or before the layer is
  // the only one that can hold it (a search, not a scan: 32,768 spans of 65,536 layers count in a blink).
  const auto after = std::upper_bound(loops.begin(), loops.end(), layer + 1,
                                      [](std::int64_t one_based, const LoopConfig& l) { return one_based < l.first; });
  if (after == loops.begin()) return nullptr;
  const LoopConfig& l = *std::prev(after);
  return l.active() && l.contains(layer) ? &l : nullptr;
}

std::int64_t ModelConfig::visits(std::int64_t layer) const {
  const LoopConfig* l = loop_of(layer);
  return l != nullptr ? l->count : 1;
}

double ModelConfig::residual_scale_at(std::int64_t layer) const {
  const LoopConfig* l = loop_of(layer);
  return l != nullptr ? l->residual_scale : 1.0;
}

bool ModelConfig::looped() const noexcept {
  return std::any_of(loops.begin(), loops.end(), [](const LoopConfig& l) { return l.active(); });
}

ProjectionShape projection_shape(const ModelConfig& c, LoraTarget t) {
  const std::int64_t h = c.hidden_size;
  const std::int64_t q = c.attention.num_heads * c.attention.head_dim;
  const std::int64_t kv = c.attention.num_kv_heads * c.attention.head_dim;
  switch (t) {
    case LoraTarget::q:
      return {h, q};
    case LoraTarget::k:
    case LoraTarget::v:
      return {h, kv};
    case LoraTarget::o:
      return {q, h};
    case LoraTarget::gate:
    case LoraTarget::up:
      return {h, c.ffn.dense_width};
    case LoraTarget::down:
      return {c.ffn.dense_width, h};
  }
  return {};
}

void parse_span(std::string_view text, std::string_view field, LoopConfig& loop) {
  const auto dash = text.find('-');
  std::int64_t first = 0;
  std::int64_t last = 0;
  const bool ok = dash == std::string_view::npos ? detail::parse_number(text, first) && (last = first, true)
                                                 : detail::parse_number(text.substr(0, dash), first) &&
                                                       detail::parse_number(text.substr(dash + 1), last);
  if (!ok)
    throw config_error(Violation(std::string(field), fmt::format("\"{}\"", detail::excerpt(text)),
                                 "must be a 1-based inclusive layer span such as \"4-9\""));
  loop.first = first;
  loop.last = last;
}

std::string format_span(const LoopConfig& loop) { return fmt::format("{}-{}", loop.first, loop.last); }

RouterForm default_router_form(const MoeConfig& m) {
  if (m.router_score == RouterScore::softmax) return RouterForm::plain;
  return m.router_bias ? RouterForm::deepseek : RouterForm::llama4;
}

bool default_renormalize(RouterForm form) { return form != RouterForm::llama4; }

}  // namespace smelt
