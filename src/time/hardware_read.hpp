// Reading a hardware spec's fields from a JSON object: a spec file's root, or
// a calibration's "hardware" member (calibration.cpp).
#pragma once

#include "smelt/hardware.hpp"
#include "util/json_reader.hpp"

namespace smelt::time_detail {

// Every field of schema smelt-hardware/1 (docs/time.md, "Hardware"); each
// violation goes to the object's list, naming the field, the value and the rule.
void read_spec(detail::JsonObject& object, HardwareSpec& spec);

}  // namespace smelt::time_detail
