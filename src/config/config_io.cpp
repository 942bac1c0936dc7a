// Format detection and the Hugging Face reader (the public readers, which add
// count's rule, are src/count/accept.cpp; util/file_io.cpp reads and writes files).
#include <fmt/format.h>

#include "config/executorch_params.hpp"
#include "config/hf_import.hpp"
#include "config/native_json.hpp"
#include "config/validate_fields.hpp"
#include "smelt/config_io.hpp"
#include "smelt/error.hpp"
#include "util/json_reader.hpp"

namespace smelt {

namespace {

ConfigFormat format_of(const nlohmann::json& json, std::string_view source) {
  if (json.is_object() && json.contains("model_type")) return ConfigFormat::huggingface;
  if (json.is_object() && json.contains("schema_version")) return ConfigFormat::native;
  if (json.is_object() && json.contains("dim") && json.contains("n_layers")) return ConfigFormat::executorch;
  throw config_error(
      fmt::format("{}: cannot tell the format: expected \"schema_version\" (smelt native JSON), \"model_type\" "
                  "(Hugging Face config.json) or \"dim\" and \"n_layers\" (ExecuTorch params.json)",
                  source));
}

ModelConfig hf_config_from_json(const nlohmann::json& json, std::string_view source) {
  if (!json.is_object()) throw config_error(fmt::format("{}: top level must be a JSON object", source));
  ModelConfig c = config_detail::import_hf(json, source);
  config_detail::validate_fields(c);
  return c;
}

}  // namespace

ConfigFormat detect_format(std::string_view text, std::string_view source) {
  return format_of(detail::parse_json_text(text, source), source);
}

ModelConfig config_detail::config_from_json(const nlohmann::json& json, std::string_view source) {
  switch (format_of(json, source)) {
    case ConfigFormat::native:
      return native_config_from_json(json, source);
    case ConfigFormat::executorch: {
      ModelConfig c = config_detail::import_executorch(json, source);
      config_detail::validate_fields(c);
      return c;
    }
    case ConfigFormat::huggingface:
      break;
  }
  return hf_config_from_json(json, source);
}

ModelConfig config_detail::read_hf_config(std::string_view text, std::string_view source) {
  return hf_config_from_json(detail::parse_json_text(text, source), source);
}

std::vector<std::string> supported_hf_model_types() { return config_detail::hf_model_types(); }

}  // namespace smelt
