// Reading a number from text: the whole text, in C++'s own locale-free syntax
// (std::from_chars: no leading '+', no spaces, no trailing characters), for
// every reader of numbers in words (CLI options, spans, CSV cells). In
// smelt::detail (include/smelt/detail/violations.hpp says why).
#pragma once

#include <charconv>
#include <string_view>
#include <system_error>

namespace smelt::detail {

// True and `out` set when all of `text` is one number of type T.
template <class T>
bool parse_number(std::string_view text, T& out) {
  const auto* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, out);
  return !text.empty() && ec == std::errc() && ptr == end;
}

}  // namespace smelt::detail
