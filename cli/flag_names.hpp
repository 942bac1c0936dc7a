// The one table from the library's names to smelt-match's flags. The library
// names its own fields in every message (SearchSpace::align_hidden = 0: must
// be positive); the CLI shows its users the flags they typed
// (--align-hidden = 0: must be positive).
#pragma once

#include <string>
#include <string_view>

#include "smelt/error.hpp"

namespace smelt::cli {

// `text` with every library name of the table replaced by its flag. A name
// matches whole only ("SearchSpace::heads" is not part of "SearchSpace::heads_x").
std::string to_flags(std::string_view text);

// A library error as smelt-match prints it: what(), with a config_error's
// violations and a cuda_error's text in flag names.
std::string describe(const smelt::error& e);

}  // namespace smelt::cli
