// Training runs, the input of a scaling-law fit: read from CSV or JSON files
// with named columns (docs/scaling.md), in the form of the law they feed.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace smelt {

enum class LawForm { chinchilla, smelt };
std::string_view to_string(LawForm v);
LawForm parse_law_form(std::string_view s, std::string_view field);

// One training run. chinchilla uses n (and d); smelt uses f, s (and d).
struct Run {
  double n = 0;       // parameters
  double f = 0;       // training FLOPs per token (smelt; chinchilla's compute when given)
  double s = 0;       // sparsity in [0, 1)
  double d = 0;       // tokens
  double loss = 0;    // final loss (natural log scale as reported)
  std::string label;  // architecture, to group runs by
};

// Reads CSV or JSON (an array of objects) with named columns: N or F (with S),
// D or C (then D = C / (6 N), or C / F), loss, and an optional label column.
// Throws config_error naming the file, row, column and rule (missing columns,
// non-positive values, NaN).
// `renames` maps the file's column names to these ({"Model Size", "N"}).
std::vector<Run> read_runs(const std::filesystem::path& path, LawForm form, const std::string& label_column = "",
                           const std::vector<std::pair<std::string, std::string>>& renames = {});

}  // namespace smelt
