// The runs and law readers on text already in memory, behind read_runs and
// read_laws (which add the file): for the fuzz harnesses and for tests.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "smelt/scaling_fit.hpp"
#include "smelt/scaling_runs.hpp"

namespace smelt::detail {

// As read_runs; `source` names the input in messages.
std::vector<Run> parse_runs(std::string_view text, const std::string& source, LawForm form,
                            const std::string& label_column = "",
                            const std::vector<std::pair<std::string, std::string>>& renames = {});

// As read_laws; errors carry "while reading laws 'SOURCE'".
std::vector<Law> parse_law_file(std::string_view text, const std::string& source);

}  // namespace smelt::detail
