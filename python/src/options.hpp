// Keyword arguments (a JSON object) read into the library's option structs:
// each keyword is the field's own name (hidden, align_hidden, tolerance_pct,
// span, loops, ...), each wrong type or unknown keyword one Violation naming
// the struct and field ("SearchSpace::hidden"), the value and the rule. Ranges
// are the library's to check (solve, resolve_loop, sweep, fit_law).
#pragma once

#include <set>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "smelt/scaling_fit.hpp"
#include "smelt/solve.hpp"
#include "smelt/sweep.hpp"
#include "smelt/violations.hpp"

namespace smelt::python {

class Keywords {
 public:
  // Throws config_error when `text` is not a JSON object (a bug of the caller in Python).
  Keywords(const std::string& text, std::string function);

  void read(SearchSpace& space);
  void read(MatchOptions& options);
  void read(LoopRecipe& recipe);
  void read(SweepOptions& options);
  void read(FitOptions& options);
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
  void range(const char* key, std::optional<KnobRange>& out);

  nlohmann::ordered_json kw_;
  std::string function_;
  std::set<std::string> known_;
  detail::Violations errors_;
};

}  // namespace smelt::python
