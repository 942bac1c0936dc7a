// memory: the bytes one GPU holds for a config under a layout, the layout
// from keyword arguments (MemoryLayout's field names), the report as
// memory_report_json writes it.
#include "smelt/memory.hpp"
#include "bindings.hpp"
#include "options.hpp"
#include "smelt/memory_report.hpp"

namespace smelt::python {

std::string memory(const CheckedConfig& config, const std::string& kwargs) {
  Keywords kw(kwargs, "memory");
  MemoryLayout layout;
  kw.read(layout);
  kw.finish();
  return memory_report_json(smelt::memory(config, layout));
}

}  // namespace smelt::python
