#include "table.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "smelt/detail/excerpt.hpp"

namespace smelt::cli {

std::string human(double v, Unit unit) {
  if (unit == Unit::tokens) return fmt::format("{:.0f}", v);
  if (unit == Unit::percent) return fmt::format("{:.2f}%", v);
  const double a = std::fabs(v);
  if (unit == Unit::bytes) {
    static constexpr const char* kBinary[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    int i = 0;
    double s = v;
    while (std::fabs(s) >= 1024.0 && i < 4) s /= 1024.0, ++i;
    return i == 0 ? fmt::format("{:.4g} B", s) : fmt::format("{:.2f} {}", s, kBinary[i]);
  }
  static constexpr const char* kSuffix[] = {"", " K", " M", " B", " T", " P", " E"};
  int i = 0;
  double s = v;
  while (std::fabs(s) >= 1000.0 && i < 6) s /= 1000.0, ++i;
  const std::string number = i == 0 && a == std::floor(a) ? fmt::format("{:.0f}", s) : fmt::format("{:.3f}", s);
  if (unit == Unit::flops) {
    static constexpr const char* kFlops[] = {" FLOP", " kFLOP", " MFLOP", " GFLOP", " TFLOP", " PFLOP", " EFLOP"};
    return number + kFlops[i];
  }
  return number + kSuffix[i];
}

// A cell as a table shows it: kept on one line (a name's newline or escape sequence would start a line of its own or
// reach the terminal) and cut: every row is padded to the widest, so one 60 MB model name would make every line
// 60 MB. Cut before it is escaped too, so that the name is not copied whole.
namespace {
std::string cell_text(const std::string& text) {
  return detail::excerpt(detail::one_line(detail::excerpt(text, 4 * detail::kExcerptBytes)));
}
}  // namespace

std::string render_table(const std::vector<std::string>& full_columns, const std::vector<Row>& rows) {
  std::vector<std::string> columns;
  for (const auto& c : full_columns) columns.push_back(cell_text(c));
  std::vector<std::vector<std::string>> cells;
  std::size_t label_width = 0;
  for (const auto& r : rows) label_width = std::max(label_width, r.label.size());
  std::vector<std::size_t> width(columns.size());
  for (std::size_t c = 0; c < columns.size(); ++c) width[c] = columns[c].size();
  for (const auto& r : rows) {
    std::vector<std::string> line;
    for (std::size_t c = 0; c < r.values.size() && c < columns.size(); ++c) {
      std::string cell = human(r.values[c], r.unit);
      if (c > 0 && r.values[0] != 0 && r.unit != Unit::percent)
        cell += fmt::format(" ({:+.1f}%)", 100.0 * (r.values[c] / r.values[0] - 1.0));
      width[c] = std::max(width[c], cell.size());
      line.push_back(std::move(cell));
    }
    cells.push_back(std::move(line));
  }
  std::string out = fmt::format("{:<{}}", "", label_width);
  for (std::size_t c = 0; c < columns.size(); ++c) out += fmt::format("  {:>{}}", columns[c], width[c]);
  out += '\n';
  for (std::size_t i = 0; i < rows.size(); ++i) {
    out += fmt::format("{:<{}}", rows[i].label, label_width);
    for (std::size_t c = 0; c < cells[i].size(); ++c) out += fmt::format("  {:>{}}", cells[i][c], width[c]);
    while (!out.empty() && out.back() == ' ') out.pop_back();
    out += '\n';
  }
  return out;
}

std::string render_cells(const std::vector<std::vector<std::string>>& full_rows, std::size_t left) {
  std::vector<std::vector<std::string>> rows;  // cut, as in render_table
  for (const auto& r : full_rows) {
    auto& cut = rows.emplace_back();
    for (const auto& cell : r) cut.push_back(cell_text(cell));
  }
  std::vector<std::size_t> width;
  for (const auto& r : rows) {
    width.resize(std::max(width.size(), r.size()));
    for (std::size_t i = 0; i < r.size(); ++i) width[i] = std::max(width[i], r[i].size());
  }
  std::string out;
  for (const auto& r : rows) {
    std::string text;
    for (std::size_t i = 0; i < r.size(); ++i)
      text += i < left ? fmt::format("{:<{}}  ", r[i], width[i]) : fmt::format("{:>{}}  ", r[i], width[i]);
    while (!text.empty() && text.back() == ' ') text.pop_back();
    out += text + '\n';
  }
  return out;
}

std::string shown_name(const std::string& name) { return detail::name_excerpt(name); }

std::string signed_pct(double percent) { return fmt::format("{:+.3f}%", percent); }

}  // namespace smelt::cli
