// The module smelt._core. A config is read once into a NativeConfig, which the
// other functions take; reports come back as text, which the package
// (python/smelt/__init__.py) wraps in typed reports.
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "bindings.hpp"
#include "smelt/config_io.hpp"
#include "smelt/export.hpp"
#include "smelt/version.hpp"

namespace nb = nanobind;
using namespace nb::literals;

NB_MODULE(_core, m) {
  m.doc() = "smelt's C++ library: configs, counts, the SMELT solver and scaling laws (text in, JSON out)";
  smelt::python::register_errors(m);
  m.attr("__version__") = SMELT_VERSION;
  nb::class_<smelt::CheckedConfig>(m, "NativeConfig",
                                   "A config read and validated once by the library, handed back to every call.")
      .def(
          "to_json", [](const smelt::CheckedConfig& c) { return smelt::to_json(c.get()); },
          "Canonical native JSON, as `smelt-match convert` writes it.");
  m.def("read_config", &smelt::python::read_config, "path"_a, "A config file (native or Hugging Face), read once.");
  m.def("parse_config", &smelt::python::parse_config, "text"_a, "source"_a,
        "Config text (native or Hugging Face, detected), read once; `source` names it in messages.");
  m.def("count", &smelt::python::count, "config"_a, "context"_a.none(), "convention"_a, "elementwise"_a,
        "name_if_empty"_a, "reference"_a.none(), "reference_name_if_empty"_a, "every_layer"_a = false,
        "The count report (JSON) of a config, an empty name replaced by `name_if_empty`; its sparsity "
        "against `reference`, or against the config with every expert active when None; "
        "`every_layer` adds one object per layer (CountReportOptions::every_layer).");
  m.def("layer_anatomy", &smelt::python::layer_anatomy, "config"_a, "layer"_a,
        "Stored layer `layer` (1-based)'s anatomy (JSON): its weight tensors, per-token products and core widths.");
  m.def("report_terms", &smelt::python::report_terms,
        "The count report's term names in its order: params, flops (the model's terms), layer_params, layer_flops "
        "(a layer's).");
  m.def("read_json_text", &smelt::python::read_json_text, "path"_a, "what"_a,
        "A JSON file's text once the library's bounded reader and parser accept it (\"-\": standard input).");
  m.def("read_config_with_family", &smelt::python::read_config_with_family, "path"_a,
        "A config file, read once, and the model_type its text names.");
  m.def("name_excerpt", &smelt::python::name_excerpt, "name"_a, "limit"_a = 64,
        "A name as the CLI's tables show it: whole up to `limit` bytes, else cut and its length.");
  m.def("option_fields", &smelt::python::option_fields,
        "The option structs' field tables (JSON): every keyword's owner, name, kind, bounds and doc.");
  m.def("derive", &smelt::python::derive, "baseline"_a, "kwargs"_a, "The match report (JSON) of a Baseline.");
  m.def("sweep", &smelt::python::sweep, "baseline"_a, "kwargs"_a, "The sweep report (JSON) of a Baseline.");
  m.def("memory", &smelt::python::memory, "config"_a, "kwargs"_a, "The memory report (JSON) of a config and layout.");
  m.def("time", &smelt::python::time, "config"_a, "hardware"_a, "kwargs"_a,
        "The time report (JSON) of a config and layout on a device.");
  m.def("fit", &smelt::python::fit, "runs"_a, "runs_is_path"_a, "source"_a, "kwargs"_a,
        "The law file (JSON) fitted to runs: a path, or JSON rows.");
  m.def("frontier", &smelt::python::frontier, "inputs"_a, "is_path"_a, "sources"_a, "budgets"_a, "sparsity"_a,
        "The frontier report (JSON) of law files (paths or JSON texts).");
  m.def("law_frontier", &smelt::python::law_frontier, "form"_a, "params"_a, "sparsity"_a, "computes"_a,
        "A law's compute-optimal (sizes, losses) at each compute (optimal_allocation); NaN where it has none.");
  m.def("law_loss", &smelt::python::law_loss, "form"_a, "params"_a, "sparsity"_a, "size"_a, "computes"_a,
        "A law's loss for a model of a fixed size at each training compute (Law::predict); NaN where not finite.");
  m.def("export_hf", &smelt::python::export_hf, "config"_a, "family"_a,
        "The Hugging Face config.json of a config in a family's schema, with a loop block.");
  m.def(
      "export_megatron",
      [](const smelt::CheckedConfig& config) {
        smelt::python::MegatronExport e = smelt::python::export_megatron(config);
        return nb::make_tuple(e.comments, e.arguments, e.text);
      },
      "config"_a, "Megatron-LM's arguments of a config: (comments, [(flag, value)], text).");
  m.def(
      "hf_family_of",
      [](const std::string& text, const std::string& source) { return smelt::hf_family_of(text, source); }, "text"_a,
      "source"_a, "The model_type a config's text names (\"\" for native JSON).");
  m.def("supported_hf_model_types", &smelt::supported_hf_model_types,
        "The Hugging Face model_type values the import understands.");
}
