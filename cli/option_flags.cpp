#include "option_flags.hpp"

#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "lists.hpp"
#include "smelt/detail/excerpt.hpp"

namespace smelt::cli {
namespace {

// "V" or "LO:HI" as a Range (KnobRange, RatioRange); the library checks the
// values' ranges. `noun` says what V is in the message ("a value", "a ratio").
template <class Range>
std::optional<Range> parse_range(const FieldFlag& f, std::string_view noun, const std::string& text,
                                 detail::Violations& errors) {
  Range r;
  const auto colon = text.find(':');
  const bool ok = colon == std::string::npos ? parse_number(std::string_view(text), r.lo) && (r.hi = r.lo, true)
                                             : parse_number(std::string_view(text).substr(0, colon), r.lo) &&
                                                   parse_number(std::string_view(text).substr(colon + 1), r.hi);
  if (!ok) {
    errors.add(fmt::format("{} = \"{}\": must be {} or a range LO:HI", f.flag, text, noun));
    return std::nullopt;
  }
  return r;
}

// One number of type T, or a violation naming the flag and `what` it must be.
template <class T>
bool parse_scalar(const FieldFlag& f, const std::string& text, const char* what, T& out, detail::Violations& errors) {
  if (parse_number(std::string_view(text), out)) return true;
  errors.add(fmt::format("{} = \"{}\": must be {}", f.flag, text, what));
  return false;
}

// Each item of a list as a number; a percentage "25%" is a number too.
// The items that read go to the library, which checks their values too (every bad value at once); a list of
// which none read leaves `out` as it was, so that the library does not also report the list empty.
template <class T>
void parse_items(const FieldFlag& f, const FlagText& t, std::vector<T>& out, detail::Violations& errors) {
  const auto words = list_items(f.flag, t.items, errors);
  if (!words) return;
  std::vector<T> read;
  bool ok = true;
  for (const std::string& w : *words) {
    std::string_view s = w;
    const bool pct = std::is_floating_point_v<T> && !s.empty() && s.back() == '%';
    if (pct) s.remove_suffix(1);
    T v{};
    if (parse_number(s, v)) {
      read.push_back(pct ? static_cast<T>(v / 100) : v);
    } else {
      ok = false;
      errors.add(fmt::format("{} = \"{}\": must be {} separated by commas", f.flag, detail::excerpt(w),
                             f.items.empty() ? (std::is_floating_point_v<T> ? "numbers" : "whole numbers") : f.items));
    }
  }
  if (ok || !read.empty()) out = std::move(read);
}

// What --help shows after a flag for its value.
std::string type_name(OptionKind kind) {
  switch (kind) {
    case OptionKind::integer:
      return "INT";
    case OptionKind::number:
      return "NUM";
    case OptionKind::range:
      return "V|LO:HI";
    case OptionKind::ratio_range:
      return "R|LO:HI";
    case OptionKind::integer_list:
      return "INT,...";
    case OptionKind::number_list:
      return "NUM,...";
    case OptionKind::word_list:
      return "WORD,...";
    case OptionKind::word:
    case OptionKind::boolean:
      break;
  }
  return "WORD";
}

template <class Parse>
void read_word(const FieldFlag& f, const std::string& text, Parse parse, detail::Violations& errors) {
  errors.collect([&] { parse(text, f.field); });
}

}  // namespace

void read_value(const FieldFlag& f, const FlagText& t, std::int64_t& out, detail::Violations& errors) {
  parse_scalar(f, t.text, "an integer", out, errors);
}
void read_value(const FieldFlag& f, const FlagText& t, std::uint64_t& out, detail::Violations& errors) {
  parse_scalar(f, t.text, "a whole number", out, errors);
}
void read_value(const FieldFlag& f, const FlagText& t, double& out, detail::Violations& errors) {
  parse_scalar(f, t.text, "a number", out, errors);
}
void read_value(const FieldFlag& f, const FlagText& t, bool& out, detail::Violations& errors) {
  if (t.on && t.off) errors.add(fmt::format("{}: contradicts {} ({})", f.negative, f.flag, f.contradiction));
  out = t.on ? true : t.off ? false : out;
}
void read_value(const FieldFlag& f, const FlagText& t, std::optional<std::int64_t>& out, detail::Violations& errors) {
  std::int64_t v = 0;
  if (parse_scalar(f, t.text, "an integer", v, errors)) out = v;
}
void read_value(const FieldFlag& f, const FlagText& t, std::optional<double>& out, detail::Violations& errors) {
  double v = 0;
  if (parse_scalar(f, t.text, "a number", v, errors)) out = v;
}
void read_value(const FieldFlag& f, const FlagText& t, std::optional<KnobRange>& out, detail::Violations& errors) {
  if (!t.text.empty()) out = parse_range<KnobRange>(f, "a value", t.text, errors);
}
void read_value(const FieldFlag& f, const FlagText& t, RatioRange& out, detail::Violations& errors) {
  if (const auto r = parse_range<RatioRange>(f, "a ratio", t.text, errors)) out = *r;
}
void read_value(const FieldFlag& f, const FlagText& t, FfnScaling& out, detail::Violations& errors) {
  read_word(
      f, t.text, [&](std::string_view s, std::string_view field) { out = parse_ffn_scaling(s, field); }, errors);
}
void read_value(const FieldFlag& f, const FlagText& t, LoopSpan& out, detail::Violations& errors) {
  read_word(
      f, t.text, [&](std::string_view s, std::string_view field) { out = parse_loop_span(s, field); }, errors);
}
void read_value(const FieldFlag& f, const FlagText& t, BenchBackendKind& out, detail::Violations& errors) {
  read_word(
      f, t.text, [&](std::string_view s, std::string_view field) { out = parse_bench_backend(s, field); }, errors);
}
void read_value(const FieldFlag& f, const FlagText& t, Dtype& out, detail::Violations& errors) {
  read_word(
      f, t.text, [&](std::string_view s, std::string_view field) { out = parse_dtype(s, field); }, errors);
}
void read_value(const FieldFlag& f, const FlagText& t, Recompute& out, detail::Violations& errors) {
  read_word(
      f, t.text, [&](std::string_view s, std::string_view field) { out = parse_recompute(s, field); }, errors);
}
void read_value(const FieldFlag& f, const FlagText& t, MemoryConvention& out, detail::Violations& errors) {
  read_word(
      f, t.text, [&](std::string_view s, std::string_view field) { out = parse_memory_convention(s, field); }, errors);
}
void read_value(const FieldFlag& f, const FlagText& t, DeviceMemory& out, detail::Violations& errors) {
  read_word(
      f, t.text, [&](std::string_view s, std::string_view field) { out = parse_device_memory(s, field); }, errors);
}
void read_value(const FieldFlag& f, const FlagText& t, std::vector<Budget>& out, detail::Violations& errors) {
  const auto words = list_items(f.flag, t.items, errors);
  if (!words) return;
  std::vector<Budget> read;
  const std::size_t before = errors.size();
  for (const auto& word : *words) {
    errors.collect([&] {
      const Budget b = parse_budget(word, f.field);
      if (std::find(read.begin(), read.end(), b) == read.end()) read.push_back(b);
    });
  }
  if (errors.size() == before || !read.empty()) out = std::move(read);
}
void read_value(const FieldFlag& f, const FlagText& t, std::vector<std::int64_t>& out, detail::Violations& errors) {
  parse_items(f, t, out, errors);
}
void read_value(const FieldFlag& f, const FlagText& t, std::vector<double>& out, detail::Violations& errors) {
  parse_items(f, t, out, errors);
}
void read_value(const FieldFlag&, const FlagText& t, std::string& out, detail::Violations&) { out = t.text; }

std::string default_text(std::int64_t v) { return fmt::format("{}", v); }
std::string default_text(std::uint64_t v) { return fmt::format("{}", v); }
std::string default_text(double v) { return fmt::format("{}", v); }
std::string default_text(bool) { return ""; }
std::string default_text(const RatioRange& v) { return fmt::format("{}:{}", v.lo, v.hi); }
std::string default_text(FfnScaling v) { return std::string(to_string(v)); }
std::string default_text(const LoopSpan& v) { return to_string(v); }
std::string default_text(BenchBackendKind v) { return std::string(to_string(v)); }
std::string default_text(Dtype v) { return std::string(to_string(v)); }
std::string default_text(Recompute v) { return std::string(to_string(v)); }
std::string default_text(MemoryConvention v) { return std::string(to_string(v)); }
std::string default_text(const DeviceMemory&) { return ""; }
std::string default_text(const std::vector<Budget>& v) {
  std::string out;
  for (const Budget b : v) out += (out.empty() ? "" : ",") + std::string(to_string(b));
  return out;
}
std::string default_text(const std::vector<std::int64_t>& v) { return fmt::format("{}", fmt::join(v, ",")); }
std::string default_text(const std::vector<double>& v) { return fmt::format("{}", fmt::join(v, ",")); }
std::string default_text(const std::string& v) { return v; }

void add_flag_of(CLI::App* sub, const FieldFlag& f, OptionKind kind, const std::string& help,
                 const std::string& default_shown, FlagText& t) {
  CLI::Option* o = nullptr;
  if (kind == OptionKind::boolean) {
    if (!f.flag.empty()) t.option = sub->add_flag(f.flag, t.on, help);
    if (!f.negative.empty()) t.negative = sub->add_flag(f.negative, t.off, f.negative_help);
    return;
  }
  const bool list =
      kind == OptionKind::integer_list || kind == OptionKind::number_list || kind == OptionKind::word_list;
  // A list's words are split at their commas by list_items (lists.hpp), not by CLI11.
  o = list ? sub->add_option(f.flag, t.items, help) : sub->add_option(f.flag, t.text, help);
  o->type_name(type_name(kind));
  if (!default_shown.empty()) o->default_str(default_shown);
  t.option = o;
}

}  // namespace smelt::cli
