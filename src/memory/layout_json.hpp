// A MemoryLayout as JSON, every field under its table name: the memory
// report's "layout" and the match report's "memory"."layout".
#pragma once

#include <nlohmann/json.hpp>

#include "smelt/memory.hpp"

namespace smelt::memory_detail {

nlohmann::ordered_json layout_json(const MemoryLayout& layout);

}  // namespace smelt::memory_detail
