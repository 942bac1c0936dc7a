#include "flag_names.hpp"

#include <array>
#include <cctype>
#include <cmath>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "smelt/bench.hpp"
#include "smelt/recipe.hpp"
#include "smelt/scaling_fit.hpp"
#include "smelt/solve.hpp"
#include "smelt/sweep.hpp"

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
};
constexpr std::array<Rename, 8> kRenames{{
    {"SearchSpace::free_heads", "", "--keep-heads", "Keep the Baseline's query heads"},
    {"MatchOptions::contexts", "--context", {}, {}, "token counts"},
    {"MatchOptions::tolerance_pct", "--tolerance"},
    {"MatchOptions::relaxations", "-", "--no-relaxations",
     "When the best misses the tolerance, do not solve each single relaxation of the space"},
    {"SweepOptions::spans", "", {}, {}, "fractions of the layers (0.25) or percentages (25%)"},
    {"SweepOptions::loops", "", {}, {}, "whole numbers"},
    {"SweepOptions::depths", "", {}, {}, "depth multipliers (0.5)"},
    {"FitOptions::huber_delta", "--delta"},
}};

// Phrases the library writes and what the CLI writes instead (a setting that
// is a flag of its own).
constexpr std::array<std::pair<std::string_view, std::string_view>, 4> kPhrases{{
    {"SearchSpace::free_heads = false", "--keep-heads"},
    {"MatchOptions::match = flops,params", "--match flops,params"},
    {"SweepOptions::depths = []", "--depths none"},
    {"export_hf::family", "--family"},
}};

std::string kebab(std::string_view name) {
  std::string out = "--";
  for (const char c : name) out += c == '_' ? '-' : c;
  return out;
}

template <class Options>
void add_table(std::vector<std::pair<std::string, std::string>>& out) {
  for (const auto& row : OptionTable<Options>::fields) {
    const FieldFlag f = field_flag(OptionTable<Options>::owner, row.name);
    out.emplace_back(f.field, f.flag.empty() ? f.negative : f.flag);
  }
}

// Every library name and its flag: the phrases first (the first match at a position wins).
const std::vector<std::pair<std::string, std::string>>& names() {
  static const auto table = [] {
    std::vector<std::pair<std::string, std::string>> out;
    for (const auto& [phrase, flag] : kPhrases) out.emplace_back(phrase, flag);
    add_table<LoopRecipe>(out);
    add_table<SearchSpace>(out);
    add_table<MatchOptions>(out);
    add_table<SweepOptions>(out);
    add_table<BenchOptions>(out);
    add_table<FitOptions>(out);
    return out;
  }();
  return table;
}

bool is_name_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

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
  FieldFlag f{fmt::format("{}::{}", owner, name), kebab(name), {}, {}, {}};
  for (const Rename& r : kRenames) {
    if (r.field != f.field) continue;
    f.flag = r.flag == "-" ? "" : r.flag.empty() ? f.flag : std::string(r.flag);
    f.negative = r.negative;
    f.negative_help = r.negative_help;
    f.items = r.items;
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

std::string to_flags(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size();) {
    bool replaced = false;
    if (i == 0 || !is_name_char(text[i - 1])) {
      for (const auto& [name, flag] : names()) {
        const std::size_t end = i + name.size();
        if (text.substr(i, name.size()) != name || (end < text.size() && is_name_char(text[end]))) continue;
        out += flag;
        i = end;
        replaced = true;
        break;
      }
    }
    if (!replaced) out += text[i++];
  }
  return out;
}

std::string describe(const smelt::error& e) {
  const auto* config = dynamic_cast<const smelt::config_error*>(&e);
  // A cuda_error may name BenchOptions::backend; other errors' texts hold file
  // names, which are never rewritten.
  if (dynamic_cast<const smelt::cuda_error*>(&e)) return to_flags(e.what());
  if (!config) return e.what();
  std::string out;
  for (const auto& v : config->violations()) {
    if (!out.empty()) out += '\n';
    out += to_flags(v.text());
  }
  return out;
}

}  // namespace smelt::cli
