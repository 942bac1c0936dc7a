// Word forms of the config enums, shared by JSON and the CLI.
#include <array>
#include <string>
#include <utility>

#include <fmt/format.h>

#include "smelt/config.hpp"
#include "smelt/error.hpp"
#include "util/excerpt.hpp"

namespace smelt {
namespace {

template <typename E, std::size_t N>
using Names = std::array<std::pair<E, std::string_view>, N>;

constexpr Names<AttentionType, 2> kAttentionType{{{AttentionType::gqa, "gqa"}, {AttentionType::mla, "mla"}}};
constexpr Names<QkNorm, 3> kQkNorm{{{QkNorm::none, "none"}, {QkNorm::per_head, "per_head"}, {QkNorm::full, "full"}}};
constexpr Names<LayerAttention, 3> kLayerAttention{
    {{LayerAttention::full, "full"}, {LayerAttention::sliding, "sliding"}, {LayerAttention::chunked, "chunked"}}};
constexpr Names<FfnType, 2> kFfnType{{{FfnType::gated, "gated"}, {FfnType::plain, "plain"}}};
constexpr Names<NormType, 2> kNormType{{{NormType::rmsnorm, "rmsnorm"}, {NormType::layernorm, "layernorm"}}};
constexpr Names<RouterScore, 2> kRouterScore{{{RouterScore::softmax, "softmax"}, {RouterScore::sigmoid, "sigmoid"}}};

template <typename E, std::size_t N>
std::string_view name_of(const Names<E, N>& names, E value) {
  for (const auto& [v, n] : names)
    if (v == value) return n;
  return "?";
}

template <typename E, std::size_t N>
E parse_of(const Names<E, N>& names, std::string_view text, std::string_view field) {
  std::string known;
  for (const auto& [v, n] : names) {
    if (n == text) return v;
    known += known.empty() ? "" : ", ";
    known += n;
  }
  throw config_error(fmt::format("{} = \"{}\": must be one of {}", field, detail::excerpt(text), known));
}

}  // namespace

std::string_view to_string(AttentionType v) { return name_of(kAttentionType, v); }
std::string_view to_string(QkNorm v) { return name_of(kQkNorm, v); }
std::string_view to_string(LayerAttention v) { return name_of(kLayerAttention, v); }
std::string_view to_string(FfnType v) { return name_of(kFfnType, v); }
std::string_view to_string(NormType v) { return name_of(kNormType, v); }
std::string_view to_string(RouterScore v) { return name_of(kRouterScore, v); }

AttentionType parse_attention_type(std::string_view s, std::string_view f) { return parse_of(kAttentionType, s, f); }
QkNorm parse_qk_norm(std::string_view s, std::string_view f) { return parse_of(kQkNorm, s, f); }
LayerAttention parse_layer_attention(std::string_view s, std::string_view f) { return parse_of(kLayerAttention, s, f); }
FfnType parse_ffn_type(std::string_view s, std::string_view f) { return parse_of(kFfnType, s, f); }
NormType parse_norm_type(std::string_view s, std::string_view f) { return parse_of(kNormType, s, f); }
RouterScore parse_router_score(std::string_view s, std::string_view f) { return parse_of(kRouterScore, s, f); }

}  // namespace smelt
