// Keyword arguments (a JSON object) read into the library's option structs:
// each keyword is the field's own name (hidden, align_hidden, tolerance_pct,
// span, loops, ...), each wrong type or unknown keyword one Violation naming
// the struct and field ("SearchSpace::hidden"), the value and the rule. Ranges
// are the library's to check (solve, resolve_loop, sweep, fit_law).
#pragma once

#include <set>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include <nlohmann/json.hpp>

#include "smelt/detail/violations.hpp"
#include "smelt/memory.hpp"
#include "smelt/scaling_fit.hpp"
#include "smelt/solve.hpp"
#include "smelt/sweep.hpp"

namespace smelt::python {

class Keywords {
 public:
  // Throws config_error when `text` is not a JSON object (a bug of the caller in Python).
  Keywords(const std::string& text, std::string function);

  // Every field of Options' table (include/smelt/option_fields.hpp), by its name.
  template <class Options>
  void read(Options& options) {
    for (const auto& row : OptionTable<Options>::fields) {
      const std::string owner(OptionTable<Options>::owner), key(row.name);
      std::visit([&](auto member) { value(owner.c_str(), key.c_str(), options.*member); }, row.member);
    }
  }
  // A string keyword outside the structs (fit's form, group_by).
  std::string text(const char* key, const std::string& fallback);
  // A {"OLD": "NEW"} object of strings (fit's renames), in its order.
  std::vector<std::pair<std::string, std::string>> renames(const char* key);

  // Every keyword no read() took, with the nearest known one; then throws
  // config_error with every violation found, if any.
  void finish();

 private:
  const nlohmann::ordered_json* take(const char* key);
  void type_error(const char* owner, const char* key, const nlohmann::ordered_json& v, const char* rule);
  template <class T>
  void integer(const char* owner, const char* key, T& out);
  void number(const char* owner, const char* key, double& out);
  void boolean(const char* owner, const char* key, bool& out);
  // One value of each type a table's member may have.
  void value(const char* owner, const char* key, std::int64_t& out);
  void value(const char* owner, const char* key, std::optional<std::int64_t>& out);
  void value(const char* owner, const char* key, std::uint64_t& out);
  void value(const char* owner, const char* key, double& out);
  void value(const char* owner, const char* key, std::optional<double>& out);
  void value(const char* owner, const char* key, bool& out);
  void value(const char* owner, const char* key, std::optional<KnobRange>& out);
  void value(const char* owner, const char* key, RatioRange& out);
  void value(const char* owner, const char* key, FfnScaling& out);
  void value(const char* owner, const char* key, LoopSpan& out);
  void value(const char* owner, const char* key, std::vector<Budget>& out);
  void value(const char* owner, const char* key, std::vector<std::int64_t>& out);
  void value(const char* owner, const char* key, std::vector<double>& out);
  void value(const char* owner, const char* key, Dtype& out);
  void value(const char* owner, const char* key, Recompute& out);
  void value(const char* owner, const char* key, MemoryConvention& out);
  void value(const char* owner, const char* key, DeviceMemory& out);
  void value(const char* owner, const char* key, std::string& out);
  template <class T, class Parse>
  void word(const char* owner, const char* key, T& out, Parse parse, const char* rule);
  template <class T, class IsItem>
  void list(const char* owner, const char* key, std::vector<T>& out, IsItem is_item, const char* item);

  nlohmann::ordered_json kw_;
  std::string function_;
  std::set<std::string> known_;
  detail::Violations errors_;
};

}  // namespace smelt::python
