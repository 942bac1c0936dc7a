// Word forms of the config enums, shared by JSON and the CLI.
#include "config/enum_find.hpp"
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
constexpr EnumNames<RouterForm, 3> kRouterForm{
    {{RouterForm::plain, "plain"}, {RouterForm::deepseek, "deepseek"}, {RouterForm::llama4, "llama4"}}};
constexpr EnumNames<NormPlacement, 3> kNormPlacement{{{NormPlacement::pre, "pre"},
                                                      {NormPlacement::sandwich, "sandwich"},
                                                      {NormPlacement::sandwich_residual, "sandwich_residual"}}};
constexpr EnumNames<Injection, 2> kInjection{{{Injection::none, "none"}, {Injection::linear, "linear"}}};
constexpr EnumNames<KvPolicy, 3> kKvPolicy{
    {{KvPolicy::per_visit, "per_visit"}, {KvPolicy::shared, "shared"}, {KvPolicy::active, "active"}}};
constexpr EnumNames<LoraTarget, 7> kLoraTarget{{{LoraTarget::q, "q"},
                                                {LoraTarget::k, "k"},
                                                {LoraTarget::v, "v"},
                                                {LoraTarget::o, "o"},
                                                {LoraTarget::gate, "gate"},
                                                {LoraTarget::up, "up"},
                                                {LoraTarget::down, "down"}}};

}  // namespace

std::string_view to_string(AttentionType v) { return name_of(kAttentionType, v); }
std::string_view to_string(QkNorm v) { return name_of(kQkNorm, v); }
std::string_view to_string(LayerAttention v) { return name_of(kLayerAttention, v); }
std::string_view to_string(FfnType v) { return name_of(kFfnType, v); }
std::string_view to_string(NormType v) { return name_of(kNormType, v); }
std::string_view to_string(RouterScore v) { return name_of(kRouterScore, v); }
std::string_view to_string(RouterForm v) { return name_of(kRouterForm, v); }
std::string_view to_string(NormPlacement v) { return name_of(kNormPlacement, v); }
std::string_view to_string(Injection v) { return name_of(kInjection, v); }
std::string_view to_string(LoraTarget v) { return name_of(kLoraTarget, v); }
std::string_view to_string(KvPolicy v) { return name_of(kKvPolicy, v); }

AttentionType parse_attention_type(std::string_view s, std::string_view f) { return parse_of(kAttentionType, s, f); }
QkNorm parse_qk_norm(std::string_view s, std::string_view f) { return parse_of(kQkNorm, s, f); }
LayerAttention parse_layer_attention(std::string_view s, std::string_view f) { return parse_of(kLayerAttention, s, f); }
FfnType parse_ffn_type(std::string_view s, std::string_view f) { return parse_of(kFfnType, s, f); }
NormType parse_norm_type(std::string_view s, std::string_view f) { return parse_of(kNormType, s, f); }
RouterScore parse_router_score(std::string_view s, std::string_view f) { return parse_of(kRouterScore, s, f); }
RouterForm parse_router_form(std::string_view s, std::string_view f) { return parse_of(kRouterForm, s, f); }
NormPlacement parse_norm_placement(std::string_view s, std::string_view f) { return parse_of(kNormPlacement, s, f); }
Injection parse_injection(std::string_view s, std::string_view f) { return parse_of(kInjection, s, f); }
LoraTarget parse_lora_target(std::string_view s, std::string_view f) { return parse_of(kLoraTarget, s, f); }
KvPolicy parse_kv_policy(std::string_view s, std::string_view f) { return parse_of(kKvPolicy, s, f); }

std::optional<LayerAttention> config_detail::find_layer_attention(std::string_view s) {
  return detail::find_of(kLayerAttention, s);
}
std::optional<LoraTarget> config_detail::find_lora_target(std::string_view s) {
  return detail::find_of(kLoraTarget, s);
}

}  // namespace smelt
