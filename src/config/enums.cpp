// Word forms of the config enums, shared by JSON and the CLI.
#include "smelt/config.hpp"
#include "util/enum_names.hpp"

namespace smelt {
namespace {

using detail::EnumNames;
using detail::name_of;
using detail::parse_of;

constexpr EnumNames<AttentionType, 2> kAttentionType{{{AttentionType::gqa, "gqa"}, {AttentionType::mla, "mla"}}};
constexpr EnumNames<QkNorm, 3> kQkNorm{
    {{QkNorm::none, "none"}, {QkNorm::per_head, "per_head"}, {QkNorm::full, "full"}}};
constexpr EnumNames<LayerAttention, 3> kLayerAttention{
    {{LayerAttention::full, "full"}, {LayerAttention::sliding, "sliding"}, {LayerAttention::chunked, "chunked"}}};
constexpr EnumNames<FfnType, 2> kFfnType{{{FfnType::gated, "gated"}, {FfnType::plain, "plain"}}};
constexpr EnumNames<NormType, 2> kNormType{{{NormType::rmsnorm, "rmsnorm"}, {NormType::layernorm, "layernorm"}}};
constexpr EnumNames<RouterScore, 2> kRouterScore{
    {{RouterScore::softmax, "softmax"}, {RouterScore::sigmoid, "sigmoid"}}};

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
