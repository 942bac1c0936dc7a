// Exports (docs/export.md): a native config as a Hugging Face config.json in
// one family's schema, or as Megatron-LM's arguments, as `smelt-match export`
// writes them.
#include "smelt/export.hpp"
#include "bindings.hpp"
#include "smelt/config_io.hpp"

namespace smelt::python {

std::string export_hf(const std::string& config, const std::string& family) {
  return smelt::export_hf(parse_native_config(config), family);
}

MegatronExport export_megatron(const std::string& config) {
  const MegatronArguments a = smelt::export_megatron(parse_native_config(config));
  return {a.comments, a.arguments, a.text()};
}

}  // namespace smelt::python
