// time: the predicted step of a config under a layout on a device, the layout
// and the options from keyword arguments (MemoryLayout's and TimeOptions'
// field names), the report as time_report_json writes it.
#include "smelt/time.hpp"
#include "bindings.hpp"
#include "options.hpp"
#include "smelt/hardware.hpp"
#include "smelt/time_report.hpp"

namespace smelt::python {

std::string time(const CheckedConfig& config, const std::string& hardware, const std::string& kwargs) {
  Keywords kw(kwargs, "time");
  MemoryLayout layout;
  TimeOptions options;
  kw.read(layout);
  kw.read(options);
  kw.finish();
  return time_report_json(step_time(config, layout, hardware_spec(hardware), options));
}

}  // namespace smelt::python
