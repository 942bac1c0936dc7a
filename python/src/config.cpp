// Configs and counts: read or parse a config into canonical native JSON, and
// count one into the same JSON report `smelt-match count --json` prints.
#include <filesystem>

#include <fmt/format.h>

#include "bindings.hpp"
#include "smelt/bounds.hpp"
#include "smelt/config_io.hpp"
#include "smelt/convention.hpp"
#include "smelt/count.hpp"
#include "smelt/count_report.hpp"
#include "smelt/error.hpp"

namespace smelt::python {

std::string read_config(const std::string& path) { return to_json(smelt::read_config(std::filesystem::path(path))); }

std::string parse_config(const std::string& text, const std::string& source) {
  return to_json(smelt::parse_config(text, source));
}

std::string count(const std::string& config, std::optional<std::int64_t> context, const std::string& convention,
                  bool elementwise, const std::string& name_if_empty, std::optional<std::string> reference,
                  const std::string& reference_name_if_empty, bool every_layer) {
  // CountOptions reads 0 as "the config's": a context given as 0 is refused
  // here, in the words the library uses for the others.
  if (context && *context < 1)
    throw config_error(
        fmt::format("context_length = {}: must be between 1 and {} tokens", *context, detail::kMaxContext));
  const Convention conv = parse_convention(convention, "convention");
  ModelConfig c = parse_native_config(config);
  if (c.name.empty()) c.name = name_if_empty;
  CountOptions options;
  options.context_length = context.value_or(0);
  options.elementwise = elementwise;
  std::optional<ModelConfig> ref;
  if (reference) {
    ref = parse_native_config(*reference);
    if (ref->name.empty()) ref->name = reference_name_if_empty;
  }
  CountReportOptions report;
  report.every_layer = every_layer;
  return count_report_json({count_model(std::move(c), options, ref ? &*ref : nullptr)}, conv, report);
}

}  // namespace smelt::python
