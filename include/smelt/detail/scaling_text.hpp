// The scaling readers on text already in memory: read_runs and read_laws
// without the file, for the fuzz harnesses, the tests and the Python bindings.
// Not API (include/smelt/detail/violations.hpp says why it is public).
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "smelt/scaling_laws.hpp"
#include "smelt/scaling_runs.hpp"

namespace smelt::detail {

// read_runs on text; `source` names the input in messages.
std::vector<Run> parse_runs(std::string_view text, const std::string& source, LawForm form,
                            const std::string& label_column = "",
                            const std::vector<std::pair<std::string, std::string>>& renames = {});

// read_laws on text; errors carry "while reading laws 'SOURCE'".
std::vector<Law> parse_law_file(std::string_view text, const std::string& source);

}  // namespace smelt::detail
