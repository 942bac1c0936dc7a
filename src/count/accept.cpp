// Accepting a config: validate() and the public config readers
// (include/smelt/config_io.hpp). A config is accepted when its fields keep
// their rules (config's validate_fields) and every total of its count fits in
// 64-bit integers, which only the count can tell: so these live in count, and
// config never calls it.
#include <fmt/format.h>

#include "config/hf_import.hpp"
#include "config/native_json.hpp"
#include "config/validate_fields.hpp"
#include "count/count_impl.hpp"
#include "smelt/checked_config.hpp"
#include "smelt/config_io.hpp"
#include "smelt/count.hpp"
#include "smelt/detail/violations.hpp"
#include "smelt/error.hpp"
#include "smelt/file_io.hpp"
#include "util/checked.hpp"
#include "util/json_reader.hpp"

namespace smelt {

namespace count_detail {

std::string overflow_message(const ModelConfig& c, const char* what) {
  return fmt::format(
      "model too large to count exactly: {} overflows 64-bit integers (hidden_size = {}, num_layers = {}, "
      "context_length = {})",
      what, c.hidden_size, c.num_layers, c.context_length);
}

void check_counts_fit(const ModelConfig& c) {
  try {
    (void)count_unchecked(c, {});
  } catch (const detail::overflow& e) {
    throw overflow_error(overflow_message(c, e.quantity()));
  }
}

}  // namespace count_detail

void validate(const ModelConfig& c) {
  config_detail::validate_fields(c);
  count_detail::check_counts_fit(c);
}

CheckedConfig::CheckedConfig(ModelConfig config) : config_(std::move(config)) { validate(config_); }

CheckedConfig detail::checked_as_read(ModelConfig config) { return {std::move(config), CheckedConfig::AsRead{}}; }

ModelConfig parse_native_config(std::string_view text, std::string_view source) {
  ModelConfig c = config_detail::read_native_config(text, source);
  count_detail::check_counts_fit(c);
  return c;
}

ModelConfig parse_hf_config(std::string_view text, std::string_view source) {
  ModelConfig c = config_detail::read_hf_config(text, source);
  count_detail::check_counts_fit(c);
  return c;
}

// The text is parsed once, to tell its format and to read it; its fields are
// checked as it is read, its count here.
CheckedConfig parse_checked_config(std::string_view text, std::string_view source) {
  ModelConfig c = config_detail::config_from_json(detail::parse_json_text(text, source), source);
  count_detail::check_counts_fit(c);
  return detail::checked_as_read(std::move(c));
}

ModelConfig parse_config(std::string_view text, std::string_view source) {
  return parse_checked_config(text, source).release();
}

ConfigWithFamily parse_config_with_family(std::string_view text, std::string_view source) {
  const nlohmann::json json = detail::parse_json_text(text, source);
  ModelConfig c = config_detail::config_from_json(json, source);
  count_detail::check_counts_fit(c);
  ConfigWithFamily out{detail::checked_as_read(std::move(c)), {}};
  // The reading has refused a model_type that is not a string.
  if (const auto type = json.find("model_type"); type != json.end() && type->is_string())
    out.model_type = type->get<std::string>();
  return out;
}

ModelConfig read_config(const std::filesystem::path& path) { return read_checked_config(path).release(); }

CheckedConfig read_checked_config(const std::filesystem::path& path) {
  const std::string source = source_name(path);
  const std::string where = fmt::format("while reading config '{}'", source);
  std::string text;
  try {
    text = read_text_file(path);
    return parse_checked_config(text, source);
  } catch (const config_error& e) {
    detail::throw_within(where, e.violations());
  } catch (const io_error& e) {
    throw io_error(fmt::format("{}: {}", where, e.what()));
  }
}

}  // namespace smelt
