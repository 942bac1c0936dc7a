// The flags of an option struct, made from its field table
// (include/smelt/option_fields.hpp): one flag per row, named "--" + the row's
// name in kebab-case (or as flag_names.cpp renames it), its help the row's
// doc and bounds, its text read by the row's kind. Every bad value is listed
// at once, with its flag; the ranges are the library's to check.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include <CLI/CLI.hpp>

#include "flag_names.hpp"
#include "smelt/bench.hpp"
#include "smelt/detail/violations.hpp"
#include "smelt/memory.hpp"
#include "smelt/option_fields.hpp"
#include "smelt/recipe.hpp"
#include "smelt/solve.hpp"

namespace smelt::cli {

// One flag's text as typed: the words of a list, or one word; bool flags count.
struct FlagText {
  std::vector<std::string> items;
  std::string text;
  bool on = false;   // a boolean's positive flag
  bool off = false;  // its negative flag (--keep-heads, --no-relaxations)
  const CLI::Option* option = nullptr;
  const CLI::Option* negative = nullptr;
  bool given() const { return (option && option->count() > 0) || (negative && negative->count() > 0); }
};

// Reading one value of each type a table's member may have; `flag` names it in messages.
void read_value(const FieldFlag& f, const FlagText& t, std::int64_t& out, detail::Violations& errors);
void read_value(const FieldFlag& f, const FlagText& t, std::uint64_t& out, detail::Violations& errors);
void read_value(const FieldFlag& f, const FlagText& t, double& out, detail::Violations& errors);
void read_value(const FieldFlag& f, const FlagText& t, bool& out, detail::Violations& errors);
void read_value(const FieldFlag& f, const FlagText& t, std::optional<std::int64_t>& out, detail::Violations& errors);
void read_value(const FieldFlag& f, const FlagText& t, std::optional<double>& out, detail::Violations& errors);
void read_value(const FieldFlag& f, const FlagText& t, std::optional<KnobRange>& out, detail::Violations& errors);
void read_value(const FieldFlag& f, const FlagText& t, RatioRange& out, detail::Violations& errors);
void read_value(const FieldFlag& f, const FlagText& t, FfnScaling& out, detail::Violations& errors);
void read_value(const FieldFlag& f, const FlagText& t, LoopSpan& out, detail::Violations& errors);
void read_value(const FieldFlag& f, const FlagText& t, BenchBackendKind& out, detail::Violations& errors);
void read_value(const FieldFlag& f, const FlagText& t, Dtype& out, detail::Violations& errors);
void read_value(const FieldFlag& f, const FlagText& t, Recompute& out, detail::Violations& errors);
void read_value(const FieldFlag& f, const FlagText& t, MemoryConvention& out, detail::Violations& errors);
void read_value(const FieldFlag& f, const FlagText& t, DeviceMemory& out, detail::Violations& errors);
void read_value(const FieldFlag& f, const FlagText& t, std::vector<Budget>& out, detail::Violations& errors);
void read_value(const FieldFlag& f, const FlagText& t, std::vector<std::int64_t>& out, detail::Violations& errors);
void read_value(const FieldFlag& f, const FlagText& t, std::vector<double>& out, detail::Violations& errors);
void read_value(const FieldFlag& f, const FlagText& t, std::string& out, detail::Violations& errors);

// The default a flag's help shows ("" for none: the doc says it).
std::string default_text(std::int64_t v);
std::string default_text(std::uint64_t v);
std::string default_text(double v);
std::string default_text(bool v);
std::string default_text(const RatioRange& v);
std::string default_text(FfnScaling v);
std::string default_text(const LoopSpan& v);
std::string default_text(BenchBackendKind v);
std::string default_text(Dtype v);
std::string default_text(Recompute v);
std::string default_text(MemoryConvention v);
std::string default_text(const DeviceMemory& v);
std::string default_text(const std::vector<Budget>& v);
std::string default_text(const std::vector<std::int64_t>& v);
std::string default_text(const std::vector<double>& v);
std::string default_text(const std::string& v);
template <class T>
std::string default_text(const std::optional<T>&) {
  return "";
}

// Adds a row's flag (and its negative, where it has one) to `sub`, reading into `t`.
void add_flag_of(CLI::App* sub, const FieldFlag& f, OptionKind kind, const std::string& help,
                 const std::string& default_shown, FlagText& t);

// The flags of Options, but for the rows named in `skip`; their help shows the values of `defaults` (a command
// that starts from other defaults than the struct's says so).
template <class Options>
class OptionFlags {
 public:
  explicit OptionFlags(CLI::App* sub, std::vector<std::string_view> skip = {}, const Options& defaults = {}) {
    for (const auto& row : OptionTable<Options>::fields) {
      if (std::find(skip.begin(), skip.end(), row.name) != skip.end()) continue;
      auto entry = std::make_unique<Entry>(Entry{&row, field_flag(OptionTable<Options>::owner, row.name), {}});
      const std::string shown = std::visit([&](auto member) { return default_text(defaults.*member); }, row.member);
      add_flag_of(sub, entry->flag, row.kind, help_text(OptionTable<Options>::owner, row.doc, row.kind, row.lo, row.hi),
                  shown, entry->text);
      entries_.push_back(std::move(entry));
    }
  }

  // The values given on the command line, written into `options`; the others keep theirs.
  void apply(Options& options, detail::Violations& errors) const {
    for (const auto& e : entries_)
      if (e->text.given())
        std::visit([&](auto member) { read_value(e->flag, e->text, options.*member, errors); }, e->row->member);
  }

  // Whether the row named `name` was given.
  bool given(std::string_view name) const {
    for (const auto& e : entries_)
      if (e->row->name == name) return e->text.given();
    return false;
  }

 private:
  using Row = std::remove_cvref_t<decltype(OptionTable<Options>::fields[0])>;
  struct Entry {
    const Row* row;
    FieldFlag flag;
    FlagText text;
  };
  std::vector<std::unique_ptr<Entry>> entries_;
};

}  // namespace smelt::cli
