// The extension smelt._core: thin functions over the public library that take
// a config read once (NativeConfig) and text (keyword arguments as a JSON
// object) and return reports as the library's own ordered JSON, so that the
// Python package's results are the CLI's JSON by construction
// (python/smelt/__init__.py).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nanobind/nanobind.h>

#include "smelt/checked_config.hpp"
#include "smelt/config.hpp"

namespace smelt::python {

// Exceptions: the smelt::error tree as smelt.Error and its children (errors.cpp).
void register_errors(nanobind::module_& m);

// Configs (config.cpp): a config is read (parsed and validated) once, into a
// CheckedConfig that Python holds (smelt._core.NativeConfig) and hands back to
// every other call, which neither parses nor validates it again. A config
// read keeps its name, empty or not, as `smelt-match convert` writes it.
CheckedConfig read_config(const std::string& path);
CheckedConfig parse_config(const std::string& text, const std::string& source);
// context: none for the config's own; `name_if_empty` names a config whose
// name is empty (its path, as `smelt-match count` names it); every_layer is
// CountReportOptions::every_layer.
std::string count(const CheckedConfig& config, std::optional<std::int64_t> context, const std::string& convention,
                  bool elementwise, const std::string& name_if_empty, const CheckedConfig* reference,
                  const std::string& reference_name_if_empty, bool every_layer);
// Stored layer `layer` (1-based)'s anatomy (smelt/anatomy.hpp) as JSON: its tensors, products and core widths.
std::string layer_anatomy(const CheckedConfig& config, std::int64_t layer);
// The count report's term names, in its order (smelt/detail/count_report_terms.hpp): "params" and "flops" as the
// model's `terms` holds them, "layer_params" and "layer_flops" as a layer's `params` and `flops_per_visit` do.
nanobind::dict report_terms();

// Files (files.cpp), read and parsed with the library's bounds; errors carry
// "while reading WHAT 'PATH'" ("-" is standard input, "<stdin>").
// The text of a JSON file (without a byte order mark) once the bounded parser accepts it.
std::string read_json_text(const std::string& path, const std::string& what);
// A config file and the family its text names ("" for native JSON), from one read.
std::pair<CheckedConfig, std::string> read_config_with_family(const std::string& path);
// A name as the CLI's tables show it (smelt/detail/excerpt.hpp).
std::string name_excerpt(const std::string& name, std::size_t limit);

// The solver (solve.cpp): `kwargs` is a JSON object of keyword arguments
// named as the library's fields (options.hpp).
// The field tables of the option structs the keywords fill (LoopRecipe,
// SearchSpace, MatchOptions, SweepOptions, FitOptions), as a JSON array of
// {owner, name, kind, lo, hi, doc}; an unbounded end is null.
std::string option_fields();

std::string derive(const CheckedConfig& baseline, const std::string& kwargs);
std::string sweep(const CheckedConfig& baseline, const std::string& kwargs);
std::string memory(const CheckedConfig& config, const std::string& kwargs);
std::string time(const CheckedConfig& config, const std::string& hardware, const std::string& kwargs);

// Scaling laws (scaling.cpp): runs as a file path or as JSON text (an array
// of objects), laws as law-file JSON.
std::string fit(const std::string& runs, bool runs_is_path, const std::string& source, const std::string& kwargs);
// inputs[i]: a law file's path (is_path[i]) or its JSON text, named sources[i].
std::string frontier(const std::vector<std::string>& inputs, const std::vector<bool>& is_path,
                     const std::vector<std::string>& sources, const std::vector<double>& budgets, double sparsity);
// One law (form and parameters in parameter_names order, as a law file holds them) at a sparsity, for the
// frontier plot: the compute-optimal size and loss at each compute (optimal_allocation), and the loss of a
// model of a fixed size at each compute (Law::predict); NaN where the law gives no finite value.
std::pair<std::vector<double>, std::vector<double>> law_frontier(const std::string& form,
                                                                 const std::vector<double>& params, double sparsity,
                                                                 const std::vector<double>& computes);
std::vector<double> law_loss(const std::string& form, const std::vector<double>& params, double sparsity, double size,
                             const std::vector<double>& computes);

// Exports (export.cpp): `family` empty picks the default family (export.hpp).
std::string export_hf(const CheckedConfig& config, const std::string& family);
struct MegatronExport {
  std::vector<std::string> comments;
  std::vector<std::pair<std::string, std::string>> arguments;
  std::string text;
};
MegatronExport export_megatron(const CheckedConfig& config);

}  // namespace smelt::python
