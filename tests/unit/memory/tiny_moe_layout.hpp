// The memory tests' subject: examples/tiny-moe.json at micro-batch 2 x 16
// tokens (fp32 under the smelt convention), and a term of a part by name.
#pragma once

#include <cstdint>
#include <string>

#include "smelt/config_io.hpp"
#include "smelt/memory.hpp"

namespace smelt::test {

inline CheckedConfig tiny() { return read_checked_config(std::string(SMELT_SOURCE_DIR) + "/examples/tiny-moe.json"); }

inline MemoryLayout small() {
  MemoryLayout l;
  l.micro_batch = 2;
  l.seq = 16;
  return l;
}

// The term's bytes, or -1 when the part has no term of that name.
inline std::int64_t term(const MemoryPart& p, const std::string& name) {
  for (const MemoryTerm& t : p.terms)
    if (t.name == name) return t.bytes;
  return -1;
}

}  // namespace smelt::test
