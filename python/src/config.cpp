// Configs and counts: read or parse a config (once: Python keeps the result),
// and count one into the same JSON report `smelt-match count --json` prints.
#include <filesystem>

#include <fmt/format.h>

#include "bindings.hpp"
#include "smelt/anatomy.hpp"
#include "smelt/config_io.hpp"
#include "smelt/convention.hpp"
#include "smelt/count.hpp"
#include "smelt/count_report.hpp"
#include "smelt/detail/bounds.hpp"
#include "smelt/detail/count_report_terms.hpp"
#include "smelt/error.hpp"

namespace smelt::python {

CheckedConfig read_config(const std::string& path) { return smelt::read_checked_config(std::filesystem::path(path)); }

CheckedConfig parse_config(const std::string& text, const std::string& source) {
  return smelt::parse_checked_config(text, source);
}

std::string layer_anatomy(const CheckedConfig& checked, std::int64_t layer) {
  // 1-based, as smelt-match anatomy --layer and the count report number layers.
  if (layer < 1 || layer > checked.get().num_layers)
    throw config_error(fmt::format("layer = {}: must be a stored layer, 1 to {}", layer, checked.get().num_layers));
  return anatomy_json(smelt::layer_anatomy(checked.get(), layer - 1));
}

std::string count(const CheckedConfig& checked, std::optional<std::int64_t> context, const std::string& convention,
                  bool elementwise, const std::string& name_if_empty, const CheckedConfig* reference,
                  const std::string& reference_name_if_empty, bool every_layer) {
  // CountOptions reads 0 as "the config's": a context given as 0 is refused
  // here, in the words the library uses for the others.
  if (context && *context < 1)
    throw config_error(
        fmt::format("context_length = {}: must be between 1 and {} tokens", *context, detail::kMaxContext));
  const Convention conv = parse_convention(convention, "convention");
  ModelConfig c = checked.get();
  if (c.name.empty()) c.name = name_if_empty;
  CountOptions options;
  options.context_length = context.value_or(0);
  options.elementwise = elementwise;
  std::optional<ModelConfig> ref;
  if (reference) {
    ref = reference->get();
    if (ref->name.empty()) ref->name = reference_name_if_empty;
  }
  CountReportOptions report;
  report.every_layer = every_layer;
  return count_report_json({count_model(std::move(c), options, ref ? &*ref : nullptr)}, conv, report);
}

nanobind::dict report_terms() {
  nanobind::list params, flops, layer_params, layer_flops;
  for (const detail::ParamTermField& f : detail::kParamTermFields) {
    params.append(nanobind::str(f.name.data(), f.name.size()));
    if (f.per_layer) layer_params.append(nanobind::str(f.name.data(), f.name.size()));
  }
  for (const detail::FlopTermField& f : detail::kFlopTermFields) {
    flops.append(nanobind::str(f.name.data(), f.name.size()));
    if (f.per_layer) layer_flops.append(nanobind::str(f.name.data(), f.name.size()));
  }
  nanobind::dict out;
  out["params"] = nanobind::tuple(params);
  out["flops"] = nanobind::tuple(flops);
  out["layer_params"] = nanobind::tuple(layer_params);
  out["layer_flops"] = nanobind::tuple(layer_flops);
  return out;
}

}  // namespace smelt::python
