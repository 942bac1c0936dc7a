// Format detection and the Hugging Face reader (the public readers, which add
// count's rule, are src/count/accept.cpp; util/file_io.cpp reads and writes files).
#include <fmt/format.h>

#include "config/hf_import.hpp"
#include "config/validate_fields.hpp"
#include "smelt/config_io.hpp"
#include "smelt/error.hpp"
#include "util/json_reader.hpp"

namespace smelt {

ConfigFormat detect_format(std::string_view text, std::string_view source) {
  const nlohmann::json json = detail::parse_json_text(text, source);
  if (json.is_object() && json.contains("model_type")) return ConfigFormat::huggingface;
  if (json.is_object() && json.contains("schema_version")) return ConfigFormat::native;
  throw config_error(
      fmt::format("{}: cannot tell the format: expected \"schema_version\" (smelt native JSON) or \"model_type\" "
                  "(Hugging Face config.json)",
                  source));
}

ModelConfig detail::read_hf_config(std::string_view text, std::string_view source) {
  const nlohmann::json json = detail::parse_json_text(text, source);
  if (!json.is_object()) throw config_error(fmt::format("{}: top level must be a JSON object", source));
  ModelConfig c = detail::import_hf(json, source);
  detail::validate_fields(c);
  return c;
}

std::vector<std::string> supported_hf_model_types() { return detail::hf_model_types(); }

}  // namespace smelt
