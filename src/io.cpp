// Format detection, file reading and atomic writing.
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <system_error>

#include <fmt/format.h>

#include "hf_import.hpp"
#include "json_reader.hpp"
#include "smelt/error.hpp"
#include "smelt/io.hpp"

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

std::string read_text_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw io_error(fmt::format("cannot open '{}': {}", path.string(), std::strerror(errno)));
  std::ostringstream buffer;
  buffer << in.rdbuf();
  if (in.bad()) throw io_error(fmt::format("cannot read '{}'", path.string()));
  return buffer.str();
}

ModelConfig read_config(const std::filesystem::path& path) {
  const std::string where = fmt::format("while reading config '{}'", path.string());
  std::string text;
  try {
    text = read_text_file(path);
    return parse_config(text, path.string());
  } catch (const config_error& e) {
    std::vector<std::string> lines{where + ":"};
    for (const auto& v : e.violations()) lines.push_back("  " + v);
    throw config_error(std::move(lines));
  } catch (const io_error& e) {
    throw io_error(fmt::format("{}: {}", where, e.what()));
  }
}

void write_text_file(const std::filesystem::path& path, std::string_view text) {
  std::filesystem::path temp = path;
  temp += ".tmp";
  {
    std::ofstream out(temp, std::ios::binary | std::ios::trunc);
    if (!out) throw io_error(fmt::format("cannot write '{}': {}", path.string(), std::strerror(errno)));
    out.write(text.data(), static_cast<std::streamsize>(text.size()));
    out.close();
    if (!out) {
      std::error_code ignored;
      std::filesystem::remove(temp, ignored);
      throw io_error(fmt::format("cannot write '{}'", path.string()));
    }
  }
  std::error_code ec;
  std::filesystem::rename(temp, path, ec);
  if (ec) {
    std::filesystem::remove(temp, ec);
    throw io_error(fmt::format("cannot write '{}': {}", path.string(), ec.message()));
  }
}

}  // namespace smelt
