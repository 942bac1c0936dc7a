#include "flag_names.hpp"

#include <array>
#include <cmath>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "smelt/bench.hpp"
#include "smelt/bench_calibrate.hpp"
#include "smelt/memory.hpp"
#include "smelt/recipe.hpp"
#include "smelt/scaling_fit.hpp"
#include "smelt/solve.hpp"
#include "smelt/sweep.hpp"
#include "smelt/time.hpp"

namespace smelt::cli {
namespace {

// The fields whose flags are not "--" + the name in kebab-case, or that say
// more: a boolean's negative flag, what a list's items are.
struct Rename {
  std::string_view field;
  std::string_view flag;  // "" keeps the kebab-case name; "-" for none
  std::string_view negative = {};
  std::string_view negative_help = {};
  std::string_view items = {};
  std::string_view contradiction = {};
};
constexpr std::array<Rename, 10> kRenames{{
    {"SearchSpace::free_heads",
     "",
     "--keep-heads",
     "Keep the Baseline's query heads",
     {},
     "keep the Baseline's query heads, or let them move: the default"},
    {"MatchOptions::contexts", "--context", {}, {}, "token counts"},
    {"MatchOptions::tolerance_pct", "--tolerance"},
    {"MatchOptions::relaxations", "-", "--no-relaxations",
     "When the best misses the tolerance, do not solve each single relaxation of the space"},
    {"SweepOptions::spans", "", {}, {}, "fractions of the layers (0.25) or percentages (25%)"},
    {"SweepOptions::loops", "", {}, {}, "whole numbers"},
    {"SweepOptions::depths", "", {}, {}, "depth multipliers (0.5)"},
    {"FitOptions::huber_delta", "--delta"},
    {"MemoryLayout::pp_layers", "", {}, {}, "layer counts"},
    {"export_hf::family", "--family"},  // a parameter of export_hf, no option struct
}};

std::string kebab(std::string_view name) {
  std::string out = "--";
  for (const char c : name) out += c == '_' ? '-' : c;
  return out;
}

// A field's flag and what its mentions need: whether it is a boolean or a list.
struct Flag {
  std::string flag;
  std::string negative;
  OptionKind kind = OptionKind::word;
};

template <class Options>
void add_table(std::vector<std::pair<std::string, Flag>>& out) {
  for (const auto& row : OptionTable<Options>::fields) {
    const FieldFlag f = field_flag(OptionTable<Options>::owner, row.name);
    out.emplace_back(f.field, Flag{f.flag, f.negative, row.kind});
  }
}

// Every library field and its flag, from the tables (and the renames outside them).
const std::vector<std::pair<std::string, Flag>>& flags() {
  static const auto table = [] {
    std::vector<std::pair<std::string, Flag>> out;
    add_table<LoopRecipe>(out);
    add_table<SearchSpace>(out);
    add_table<MatchOptions>(out);
    add_table<SweepOptions>(out);
    add_table<BenchOptions>(out);
    add_table<CalibrateOptions>(out);
    add_table<FitOptions>(out);
    add_table<MemoryLayout>(out);
    add_table<TimeOptions>(out);
    out.emplace_back("export_hf::family", Flag{"--family", "", OptionKind::word});
    return out;
  }();
  return table;
}

const Flag* find_flag(std::string_view field) {
  for (const auto& [name, flag] : flags())
    if (name == field) return &flag;
  return nullptr;
}

// A bound as help shows it: 2^24 for large powers of two, 0.000001, 1000000.
std::string bound_text(double v) {
  if (v >= 65536 && std::exp2(std::round(std::log2(v))) == v) return fmt::format("2^{}", std::lround(std::log2(v)));
  if (v == std::round(v) && std::fabs(v) < 1e15) return fmt::format("{}", static_cast<long long>(v));
  std::string s = fmt::format("{:f}", v);
  while (s.back() == '0') s.pop_back();
  return s;
}

}  // namespace

FieldFlag field_flag(std::string_view owner, std::string_view name) {
  FieldFlag f{fmt::format("{}::{}", owner, name), kebab(name), {}, {}, {}, {}};
  for (const Rename& r : kRenames) {
    if (r.field != f.field) continue;
    f.flag = r.flag == "-" ? "" : r.flag.empty() ? f.flag : std::string(r.flag);
    f.negative = r.negative;
    f.negative_help = r.negative_help;
    f.items = r.items;
    f.contradiction = r.contradiction;
  }
  return f;
}

std::string help_text(std::string_view owner, std::string_view doc, OptionKind kind, double lo, double hi) {
  std::string out;
  for (std::size_t i = 0; i < doc.size(); ++i) {
    const std::size_t close = doc[i] == '{' ? doc.find('}', i) : std::string_view::npos;
    if (close == std::string_view::npos) {
      out += doc[i];
      continue;
    }
    const FieldFlag f = field_flag(owner, doc.substr(i + 1, close - i - 1));
    out += f.flag.empty() ? f.negative : f.flag;
    i = close;
  }
  const bool numeric = kind == OptionKind::integer || kind == OptionKind::number || kind == OptionKind::range ||
                       kind == OptionKind::ratio_range || kind == OptionKind::integer_list ||
                       kind == OptionKind::number_list;
  // "at least 0" of a count says nothing; an open "above 0" is the doc's to say.
  if (!numeric || (std::isinf(lo) && std::isinf(hi)) || (lo == 0 && std::isinf(hi))) return out;
  if (std::isinf(hi)) return fmt::format("{}; at least {}", out, bound_text(lo));
  return fmt::format("{}; {} to {}", out, bound_text(lo), bound_text(hi));
}

std::string flag_of_field(std::string_view field) {
  std::string out;
  std::size_t i = field.find_first_not_of(' ');
  out.append(field.substr(0, i == std::string_view::npos ? field.size() : i));  // throw_within's indent
  while (i != std::string_view::npos && i < field.size()) {
    const std::size_t comma = field.find(", ", i);
    const std::string_view name = field.substr(i, comma == std::string_view::npos ? std::string_view::npos : comma - i);
    const Flag* f = find_flag(name);
    out += f ? (f->flag.empty() ? f->negative : f->flag) : std::string(name);
    if (comma == std::string_view::npos) break;
    out += ", ";
    i = comma + 2;
  }
  return out;
}

std::string flag_of(const FieldMention& m) {
  const Flag* f = find_flag(m.field);
  if (!f) return m.value.empty() ? m.field : m.field + " = " + m.value;
  const std::string& flag = f->flag.empty() ? f->negative : f->flag;
  if (m.value.empty()) return flag;
  // A boolean set is its flag (false: its negative flag), a list is its items ("none" for no item).
  if (f->kind == OptionKind::boolean && !f->negative.empty()) return m.value == "false" ? f->negative : f->flag;
  if (f->kind == OptionKind::integer_list || f->kind == OptionKind::number_list || f->kind == OptionKind::word_list)
    return flag + " " + (m.value == "[]" ? std::string("none") : m.value);
  return flag + " = " + m.value;
}

std::string shown(const Violation& v) {
  Violation out = v;
  out.field = flag_of_field(v.field);
  out.rule = with_names(v.rule, v.mentions, flag_of);
  out.mentions.clear();
  return out.text();
}

std::string shown(const Message& m) { return with_names(m.text, m.mentions, flag_of); }

std::string describe(const smelt::error& e) {
  // A cuda_error may be about BenchOptions::backend; other errors name no option.
  if (const auto* cuda = dynamic_cast<const smelt::cuda_error*>(&e); cuda && cuda->violation())
    return shown(*cuda->violation());
  const auto* config = dynamic_cast<const smelt::config_error*>(&e);
  if (!config) return e.what();
  std::string out;
  for (const auto& v : config->violations()) {
    if (!out.empty()) out += '\n';
    out += shown(v);
  }
  return out;
}

}  // namespace smelt::cli
