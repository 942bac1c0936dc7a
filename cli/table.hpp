// Short aligned tables for human output: one column per model, relative
// differences to the first column beside the others.
#pragma once

#include <string>
#include <vector>

namespace smelt::cli {

enum class Unit { count, flops, bytes, tokens, percent };

struct Row {
  std::string label;
  std::vector<double> values;  // one per column; empty for a section heading
  Unit unit = Unit::count;
};

// 46.703 B, 25.96 GFLOP, 128.0 KiB, 4096: three or four significant figures.
std::string human(double value, Unit unit);

std::string render_table(const std::vector<std::string>& columns, const std::vector<Row>& rows);

// Rows of text cells in aligned columns: the first `left` columns left-aligned,
// the others right-aligned, two spaces apart, trailing spaces trimmed.
std::string render_cells(const std::vector<std::vector<std::string>>& rows, std::size_t left);

// A name as a table or message shows it: cut to its first 64 bytes, marked
// "..." with the full size, when longer (an input's label can be megabytes).
std::string shown_name(const std::string& name);

// A mismatch in percent, signed, to three decimals: "+0.125%".
std::string signed_pct(double percent);

}  // namespace smelt::cli
