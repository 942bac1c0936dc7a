// export_hf: a family's config.json (export/hf_families.cpp writes it), then
// the proof that nothing was lost: the file is read back with the import and
// every field that differs is a violation. That check, not a list of rules
// per family, is what keeps a feature from being dropped silently: a field a
// writer cannot hold (MLA in Mixtral, per-head q/k norms in a family without
// them) reads back differently and is named with the value it would become.
#include <algorithm>
#include <array>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "config/executorch_params.hpp"
#include "config/hf_import.hpp"
#include "config/native_json.hpp"
#include "export/export_text.hpp"
#include "export/hf_families.hpp"
#include "export/moe_layers.hpp"
#include "smelt/config_io.hpp"
#include "smelt/count.hpp"
#include "smelt/detail/excerpt.hpp"
#include "smelt/error.hpp"
#include "smelt/export.hpp"
#include "util/json_reader.hpp"

namespace smelt {
namespace {

using export_detail::HfFamily;
using export_detail::HfJson;
using Json = nlohmann::ordered_json;

constexpr std::array<std::string_view, 16> kDefaultOrder{
    "mixtral", "qwen3_moe", "qwen2_moe", "deepseek_v3", "deepseek_v2", "gpt_oss", "olmoe",        "llama4_text",
    "dbrx",    "llama",     "qwen3",     "qwen2",       "mistral",     "ouro",    "huginn_raven", "nanbeige"};

const HfFamily& find_family(std::string_view family) {
  const auto& all = export_detail::hf_families();
  const auto it = std::find_if(all.begin(), all.end(), [&](const HfFamily& f) { return f.model_type == family; });
  if (it == all.end())
    throw config_error(Violation("export_hf::family", fmt::format("\"{}\"", detail::excerpt(family)),
                                 fmt::format("must be one of {}", fmt::join(hf_export_families(), ", "))));
  return *it;
}

HfJson write(const ModelConfig& c, const HfFamily& f) {
  HfJson j;
  j["architectures"] = {f.architecture};
  j["model_type"] = f.model_type;
  if (!c.name.empty()) j["_name_or_path"] = c.name;
  f.write(c, j);
  const auto span = [](const LoopConfig& l) {
    return HfJson{
        {"first_layer", l.first}, {"last_layer", l.last}, {"count", l.count}, {"residual_scale", l.residual_scale}};
  };
  if (f.own_loop) return j;  // what the family's keys cannot hold reads back differently and is named
  if (c.loops.size() == 1 && c.loops.front().first > 0) j["loop"] = span(c.loops.front());
  if (c.loops.size() > 1) {
    j["loops"] = HfJson::array();
    for (const LoopConfig& l : c.loops) j["loops"].push_back(span(l));
  }
  return j;
}

// Native JSON without the name, with the attention pattern and the MoE layers
// spelled out layer by layer: two configs that build the same layers compare
// equal however their rules are written ({sliding, full} or 36 entries).
Json semantic(const ModelConfig& c) {
  Json j = config_detail::config_json(c);
  j.erase("schema_version");
  j.erase("name");
  // Fields written only when set are compared always: a family that adds a loop or a norm is caught too.
  j["norm_placement"] = to_string(c.norm_placement);
  j.erase("loop");
  j["loops"] = Json::array();
  for (const LoopConfig& l : c.loops)
    if (l.first > 0) j["loops"].push_back(config_detail::loop_json(l));
  Json kinds = Json::array();
  for (std::int64_t i = 0; i < c.num_layers; ++i) kinds.push_back(to_string(c.attention_at(i)));
  j["attention"]["pattern"] = std::move(kinds);
  if (j.contains("moe")) {
    // The routing choices too, written only where they differ from their defaults (before the layers, as read).
    j["moe"].erase("layers");
    j["moe"]["router_form"] = to_string(c.moe.router_form);
    j["moe"]["renormalize"] = c.moe.renormalize;
    if (!c.moe.clamped_swiglu) j["moe"]["clamped_swiglu"] = nullptr;
    Json layers = Json::array();
    const std::vector<bool> moe = export_detail::moe_layer_flags(c);
    for (std::size_t i = 0; i < moe.size(); ++i)
      if (moe[i]) layers.push_back(i + 1);
    j["moe"]["layers"] = std::move(layers);
  }
  return j;
}

// Every field of `want` that `got` lacks or holds differently. A changed
// attention type explains every other attention field, so it stands alone.
void differences(const Json& want, const Json& got, const Json& shown, const Json& back, const std::string& path,
                 std::string_view family, std::vector<Violation>& out) {
  for (const auto& [key, value] : want.items()) {
    const std::string field = path.empty() ? key : path + "." + key;
    const Json& value_shown = shown.contains(key) ? shown[key] : value;
    if (!got.contains(key)) {
      out.emplace_back(field, detail::json_excerpt(nlohmann::json::parse(value_shown.dump())),
                       fmt::format("the {} schema cannot express it (it reads back without it)", family));
      continue;
    }
    if (value == got[key]) continue;
    if (value.is_object() && got[key].is_object()) {
      if (key == "attention" && value["type"] != got[key]["type"]) {
        differences(Json{{"type", value["type"]}}, got[key], value_shown, back[key], field, family, out);
        continue;
      }
      differences(value, got[key], value_shown, back.contains(key) ? back[key] : got[key], field, family, out);
      continue;
    }
    const Json& back_shown = back.contains(key) ? back[key] : got[key];
    out.emplace_back(field, detail::json_excerpt(nlohmann::json::parse(value_shown.dump())),
                     fmt::format("the {} schema cannot express it (it reads back as {})", family,
                                 detail::json_excerpt(nlohmann::json::parse(back_shown.dump()))));
  }
}

// The fields of `c` that the family's config.json `j` does not carry.
// `schema` names the format in messages ("Hugging Face mixtral"); `read` is its import.
template <typename Read>
std::vector<Violation> lost_fields(const ModelConfig& c, const HfJson& j, const std::string& schema, Read read) {
  const std::string_view family = schema;
  ModelConfig back;
  try {
    back = read(nlohmann::json::parse(j.dump()));
  } catch (const config_error& e) {
    // A writer wrote what its own reader refuses: the schema cannot hold the config.
    std::vector<Violation> out;
    for (const auto& v : e.violations())
      out.emplace_back(v.field, v.value, fmt::format("{} (the {} schema cannot express this config)", v.rule, family));
    return out;
  }
  std::vector<Violation> out;
  const Json shown = config_detail::config_json(c);
  const Json back_shown = config_detail::config_json(back);
  differences(semantic(c), semantic(back), shown, back_shown, "", family, out);
  return out;
}

std::string hf_schema(std::string_view family) { return fmt::format("Hugging Face {}", family); }

ModelConfig import_hf(const nlohmann::json& json) { return config_detail::import_hf(json, "<export>"); }

ModelConfig import_executorch(const nlohmann::json& json) { return config_detail::import_executorch(json, "<export>"); }

}  // namespace

std::string export_executorch(const ModelConfig& config) {
  validate(config);
  const HfJson j = config_detail::executorch_params(config);
  if (auto lost = lost_fields(config, j, "ExecuTorch Llama params.json", import_executorch); !lost.empty())
    throw config_error(std::move(lost));
  return j.dump(2) + "\n";
}

std::vector<std::string> hf_export_families() {
  std::vector<std::string> out;
  for (const auto& f : export_detail::hf_families()) out.emplace_back(f.model_type);
  return out;
}

std::string hf_family_of(std::string_view config_text, std::string_view source) {
  if (detect_format(config_text, source) != ConfigFormat::huggingface) return {};
  const nlohmann::json json = detail::parse_json_text(config_text, source);
  const auto& type = json.at("model_type");
  return type.is_string() ? type.get<std::string>() : std::string{};  // parse_hf_config names a bad one
}

std::string default_hf_family(const ModelConfig& config) {
  validate(config);
  export_detail::require_utf8_name(config);
  std::vector<Violation> reasons{
      Violation("no Hugging Face family expresses this config; the first field each family cannot express:")};
  for (const auto family : kDefaultOrder) {
    const HfFamily& f = find_family(family);
    const auto lost = lost_fields(config, write(config, f), hf_schema(family), import_hf);
    if (lost.empty()) return std::string(family);
    reasons.emplace_back(fmt::format("  {}: {}", family, lost[0].text()));
  }
  throw config_error(std::move(reasons));
}

std::string export_hf(const ModelConfig& config, std::string_view family) {
  validate(config);
  export_detail::require_utf8_name(config);
  const std::string chosen = family.empty() ? default_hf_family(config) : std::string(family);
  const HfFamily& f = find_family(chosen);
  const HfJson j = write(config, f);
  if (auto lost = lost_fields(config, j, hf_schema(f.model_type), import_hf); !lost.empty())
    throw config_error(std::move(lost));
  // ASCII, as transformers writes config.json (json.dumps escapes non-ASCII): no byte of a name can
  // look like a line break or a control character to any reader.
  return j.dump(2, ' ', /*ensure_ascii=*/true) + "\n";
}

}  // namespace smelt
