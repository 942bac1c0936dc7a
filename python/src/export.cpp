// Exports (docs/export.md): a config read once as a Hugging Face config.json in
// one family's schema, or as Megatron-LM's arguments, as `smelt-match export`
// writes them.
#include "smelt/export.hpp"
#include "bindings.hpp"
#include "smelt/config_io.hpp"

namespace smelt::python {

std::string export_hf(const CheckedConfig& config, const std::string& family) {
  return smelt::export_hf(config.get(), family);
}

MegatronExport export_megatron(const CheckedConfig& config) {
  const MegatronArguments a = smelt::export_megatron(config);
  return {a.comments, a.arguments, a.text()};
}

}  // namespace smelt::python
