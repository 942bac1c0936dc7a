// One libFuzzer entry point per harness. Each catches what bad input may throw
// (smelt::error and its children); anything else escaping, a sanitizer report
// or a failed round trip is a finding. replay_main.cpp runs the same function
// over a corpus without libFuzzer, so every build replays every kept input.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);

namespace smelt::fuzz {

inline std::string_view text_of(const std::uint8_t* data, std::size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

// A property that must hold for every input: a finding when it does not.
inline void require(bool holds) {
  if (!holds) __builtin_trap();
}

}  // namespace smelt::fuzz
