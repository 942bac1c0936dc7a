// The shipped device specs (data/hardware/*.json), compiled into the library.
#pragma once

#include <string_view>
#include <vector>

namespace smelt::time_detail {

struct ShippedSpec {
  std::string_view name;  // the file's name without .json
  std::string_view json;
};

// In the order of their names.
const std::vector<ShippedSpec>& shipped_specs();

}  // namespace smelt::time_detail
