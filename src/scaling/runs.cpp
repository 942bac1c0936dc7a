// Training runs for scaling-law fits: CSV (a header row, comma-separated,
// double-quoted fields allowed) or JSON (an array of objects), with named,
// case-sensitive columns. Every bad value is reported at once, each naming the
// file, the 1-based data row, the column, the value and the rule.
#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <optional>
#include <utility>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "smelt/detail/excerpt.hpp"
#include "smelt/detail/parse_number.hpp"
#include "smelt/detail/scaling_text.hpp"
#include "smelt/detail/violations.hpp"
#include "smelt/error.hpp"
#include "smelt/file_io.hpp"
#include "smelt/scaling_fit.hpp"
#include "smelt/scaling_runs.hpp"
#include "util/csv.hpp"
#include "util/enum_names.hpp"
#include "util/json_reader.hpp"

namespace smelt {
namespace {

constexpr detail::EnumNames<LawForm, 2> kForms{{{LawForm::chinchilla, "chinchilla"}, {LawForm::smelt, "smelt"}}};

// One cell: absent (missing key, empty CSV field, JSON null), a number (JSON),
// or text (CSV fields, JSON strings). `shown` is what messages print.
struct Cell {
  enum class Kind { absent, number, text } kind = Kind::absent;
  double number = 0;
  std::string shown;
};

struct Table {
  std::vector<std::string> columns;  // every column seen
  std::vector<std::vector<std::pair<std::string, Cell>>> rows;
  std::vector<std::size_t> row_numbers;  // 1-based, in the file's data rows
  bool has(std::string_view column) const {
    for (const auto& c : columns)
      if (c == column) return true;
    return false;
  }
};

Table csv_table(std::string_view text, const std::string& source, detail::Violations& violations) {
  Table t;
  auto records = detail::read_csv(text, source);
  if (records.empty()) return t;
  t.columns = records.front();
  for (std::size_t c = 0; c < t.columns.size(); ++c)
    if (std::find(t.columns.begin(), t.columns.begin() + static_cast<std::ptrdiff_t>(c), t.columns[c]) !=
        t.columns.begin() + static_cast<std::ptrdiff_t>(c))
      violations.add(
          fmt::format("{}: column \"{}\" appears twice in the header", source, detail::excerpt(t.columns[c])));
  for (std::size_t r = 1; r < records.size(); ++r) {
    auto& fields = records[r];
    if (fields.size() != t.columns.size()) {
      violations.add(
          fmt::format("{}: row {}: has {} fields, the header has {}", source, r, fields.size(), t.columns.size()));
      continue;
    }
    t.row_numbers.push_back(r);
    auto& row = t.rows.emplace_back();
    for (std::size_t c = 0; c < fields.size(); ++c) {
      Cell cell;
      if (!fields[c].empty()) cell.kind = Cell::Kind::text, cell.shown = std::move(fields[c]);
      row.emplace_back(t.columns[c], std::move(cell));
    }
  }
  return t;
}

Table json_table(std::string_view text, const std::string& source, detail::Violations& violations) {
  const nlohmann::json json = detail::parse_json_text(text, source);
  if (!json.is_array()) throw config_error(fmt::format("{}: top level must be a JSON array of objects", source));
  Table t;
  for (std::size_t r = 0; r < json.size(); ++r) {
    const auto& object = json[r];
    if (!object.is_object()) {
      violations.add(fmt::format("{}: row {}: must be an object", source, r + 1));
      continue;
    }
    t.row_numbers.push_back(r + 1);
    auto& row = t.rows.emplace_back();
    for (const auto& [key, value] : object.items()) {
      if (!t.has(key)) t.columns.push_back(key);
      Cell cell;
      if (value.is_number()) {
        cell.kind = Cell::Kind::number, cell.number = value.get<double>(), cell.shown = value.dump();
      } else if (value.is_string()) {
        cell.kind = Cell::Kind::text, cell.shown = value.get<std::string>();
      } else if (!value.is_null()) {
        cell.kind = Cell::Kind::text, cell.shown = detail::json_excerpt(value);
      }
      row.emplace_back(key, std::move(cell));
    }
  }
  return t;
}

// Whether the JSON writer takes `s` (law files hold labels): the criterion
// nlohmann's dump applies, which throws type_error 316 on other bytes. CSV is
// read as bytes; a JSON runs file's strings were checked by its parser.
bool is_utf8(const std::string& s) {
  try {
    (void)nlohmann::json(s).dump();
    return true;
  } catch (const nlohmann::json::type_error&) {
    return false;
  }
}

// The row's cell in `column`, or nullptr when it has none (const or not, as the row).
template <typename Row>
auto find(Row& row, std::string_view column) -> decltype(&row.front().second) {
  for (auto& [name, cell] : row)
    if (name == column) return cell.kind == Cell::Kind::absent ? nullptr : &cell;
  return nullptr;
}

enum class Rule { positive, fraction };  // > 0; in [0, 1)

class RowReader {
 public:
  RowReader(const std::string& source, std::size_t row, detail::Violations& violations)
      : source_(source), row_(row), violations_(violations) {}

  // A finite number obeying the rule, or nullopt after recording why not.
  std::optional<double> number(const Cell* cell, std::string_view column, Rule rule) {
    if (!cell) return bad(fmt::format("{}: missing value", column));
    double v = cell->number;
    if (cell->kind == Cell::Kind::text) {
      const std::string& s = cell->shown;
      if (!detail::parse_number(s, v))
        return bad(fmt::format("{} = \"{}\": must be a number", column, detail::excerpt(s)));
    }
    const std::string shown = detail::excerpt(cell->shown);
    if (!std::isfinite(v)) return bad(fmt::format("{} = {}: must be a finite number", column, shown));
    if (rule == Rule::positive && !(v > 0)) return bad(fmt::format("{} = {}: must be positive", column, shown));
    if (rule == Rule::fraction && !(v >= 0 && v < 1))
      return bad(fmt::format("{} = {}: must be in [0, 1)", column, shown));
    return v;
  }

 private:
  std::optional<double> bad(const std::string& what) {
    violations_.add(fmt::format("{}: row {}: {}", source_, row_, what));
    return std::nullopt;
  }
  const std::string& source_;
  std::size_t row_;
  detail::Violations& violations_;
};

}  // namespace

std::string_view to_string(LawForm v) { return detail::name_of(kForms, v); }
LawForm parse_law_form(std::string_view s, std::string_view field) { return detail::parse_of(kForms, s, field); }

std::vector<std::string> parameter_names(LawForm form) {
  if (form == LawForm::chinchilla) return {"E", "A", "B", "alpha", "beta"};
  return {"E", "A", "a", "b", "K", "c"};
}

std::vector<Run> read_runs(const std::filesystem::path& path, LawForm form, const std::string& label_column,
                           const std::vector<std::pair<std::string, std::string>>& renames) {
  return detail::parse_runs(read_text_file(path), source_name(path), form, label_column, renames);
}

std::vector<Run> detail::parse_runs(std::string_view text, const std::string& path, LawForm form,
                                    const std::string& label_column,
                                    const std::vector<std::pair<std::string, std::string>>& renames) {
  if (text.starts_with("\xEF\xBB\xBF")) text.remove_prefix(3);  // a UTF-8 byte order mark (spreadsheets write one)
  detail::Violations violations;
  const auto first = text.find_first_not_of(" \t\r\n");
  const bool json = first != std::string::npos && (text[first] == '[' || text[first] == '{');
  Table table = json ? json_table(text, path, violations) : csv_table(text, path, violations);
  // Other tools' column names (Epoch's "Model Size", "Training FLOP") read as ours.
  for (const auto& [from, to] : renames) {
    if (!table.has(from)) {
      violations.add(fmt::format("{}: renames \"{}\" -> \"{}\": no column \"{}\"", path, from, to, from));
      continue;
    }
    for (auto& c : table.columns)
      if (c == from) c = to;
    for (auto& row : table.rows)
      for (auto& [name, cell] : row)
        if (name == from) name = to;
  }

  // Columns: all present, or one message each (and no reading of values).
  const std::size_t shape_errors = violations.size();
  const bool chinchilla = form == LawForm::chinchilla;
  auto require = [&](const std::string& column, std::string_view why) {
    if (table.has(column)) return;
    const std::string hint = detail::nearest(column, table.columns);
    violations.add(hint.empty()
                       ? fmt::format("{}: missing column \"{}\" ({})", path, column, why)
                       : fmt::format("{}: missing column \"{}\" ({}; did you mean \"{}\"?)", path, column, why, hint));
  };
  for (const char* column :
       chinchilla ? std::vector<const char*>{"N", "loss"} : std::vector<const char*>{"F", "S", "loss"})
    require(column, "required");
  if (!label_column.empty()) require(label_column, "the label column");
  if (!table.has("D") && !table.has("C"))
    violations.add(fmt::format("{}: missing column \"D\" or \"C\" (one is required)", path));
  if (violations.size() > shape_errors) violations.throw_if_any();
  if (table.rows.empty() && violations.empty()) throw config_error(fmt::format("{}: no runs (no data rows)", path));

  // chinchilla reads F as its FLOPs per token when given (C = F D, else 6 N D).
  const bool has_f = table.has("F");
  std::vector<Run> runs;
  for (std::size_t r = 0; r < table.rows.size(); ++r) {
    auto& row = table.rows[r];  // not const: the label moves out of it
    const std::size_t number = table.row_numbers[r];
    RowReader read(path, number, violations);
    Run run;
    bool ok = true;
    auto take = [&](double& into, std::string_view column, Rule rule) {
      const auto v = read.number(find(row, column), column, rule);
      ok = ok && v.has_value();
      if (v) into = *v;
    };
    if (chinchilla) {
      take(run.n, "N", Rule::positive);
      if (has_f && find(row, "F")) take(run.f, "F", Rule::positive);
    } else {
      take(run.f, "F", Rule::positive);
      take(run.s, "S", Rule::fraction);
    }
    if (!find(row, "D") && !find(row, "C")) {
      const bool both = table.has("D") && table.has("C");
      take(run.d, both ? "D or C" : table.has("D") ? "D" : "C", Rule::positive);
    } else if (find(row, "D")) {
      take(run.d, "D", Rule::positive);
    } else {
      double compute = 0;
      take(compute, "C", Rule::positive);
      const double per_token = run.f > 0 ? run.f : 6 * run.n;
      if (ok) run.d = compute / per_token;
      // Both finite and positive, the quotient can still leave the doubles
      // (C = 1e308, N = 1e-10 gives inf; C = 1e-320, N = 1e10 gives 0).
      if (ok && !(run.d > 0 && std::isfinite(run.d))) {
        ok = false;
        violations.add(
            fmt::format("{}: row {}: D = C / {} = {:g} (C = {}, {} = {}): must be a positive finite "
                        "number of tokens",
                        path, number, run.f > 0 ? "F" : "(6 N)", run.d, find(row, "C")->shown, run.f > 0 ? "F" : "N",
                        find(row, run.f > 0 ? "F" : "N")->shown));
      }
    }
    take(run.loss, "loss", Rule::positive);
    if (!label_column.empty()) {
      Cell* cell = find(row, label_column);
      if (!cell) violations.add(fmt::format("{}: row {}: {}: missing value", path, number, label_column));
      if (cell && !is_utf8(cell->shown))
        violations.add(fmt::format("{}: row {}: {}: not UTF-8 text (labels are written to JSON law files)", path,
                                   number, label_column));
      else if (cell)
        run.label = std::move(cell->shown);  // read last: held once, by the run
    }
    if (ok) runs.push_back(std::move(run));
  }
  violations.throw_if_any();
  return runs;
}

}  // namespace smelt
