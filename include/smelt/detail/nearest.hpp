// The nearest known word to a misspelt one, by edit distance: how the config
// reader suggests a key ("did you mean"), and how the CLI and the Python
// bindings suggest an option. In smelt::detail (include/smelt/detail/violations.hpp
// says why).
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace smelt::detail {

// The known word closest to `word` (edit distance), or "" if none is close.
std::string nearest(std::string_view word, const std::vector<std::string>& known);

}  // namespace smelt::detail
