// Format detection and reading configs (file_io.cpp reads and writes files).
#include <fmt/format.h>

#include "config/hf_import.hpp"
#include "smelt/config_io.hpp"
#include "smelt/error.hpp"
#include "smelt/file_io.hpp"
#include "smelt/violations.hpp"
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

ModelConfig parse_config(std::string_view text, std::string_view source) {
  return detect_format(text, source) == ConfigFormat::native ? parse_native_config(text, source)
                                                             : parse_hf_config(text, source);
}

ModelConfig parse_hf_config(std::string_view text, std::string_view source) {
  const nlohmann::json json = detail::parse_json_text(text, source);
  if (!json.is_object()) throw config_error(fmt::format("{}: top level must be a JSON object", source));
  ModelConfig c = detail::import_hf(json, source);
  validate(c);
  return c;
}

std::vector<std::string> supported_hf_model_types() { return detail::hf_model_types(); }

ModelConfig read_config(const std::filesystem::path& path) {
  const std::string source = source_name(path);
  const std::string where = fmt::format("while reading config '{}'", source);
  std::string text;
  try {
    text = read_text_file(path);
    return parse_config(text, source);
  } catch (const config_error& e) {
    detail::throw_within(where, e.violations());
  } catch (const io_error& e) {
    throw io_error(fmt::format("{}: {}", where, e.what()));
  }
}

}  // namespace smelt
