// The option structs' field tables (include/smelt/option_fields.hpp) as JSON,
// so that the package's docstrings list every keyword with its doc and bounds.
#include <cmath>

#include <nlohmann/json.hpp>

#include "bindings.hpp"
#include "smelt/memory.hpp"
#include "smelt/option_fields.hpp"
#include "smelt/recipe.hpp"
#include "smelt/scaling_fit.hpp"
#include "smelt/solve.hpp"
#include "smelt/sweep.hpp"
#include "smelt/time.hpp"

namespace smelt::python {
namespace {

using json = nlohmann::ordered_json;

// An unbounded end is null.
json bound(double v) { return std::isinf(v) ? json() : json(v); }

template <class Options>
void add_table(json& out) {
  for (const auto& row : OptionTable<Options>::fields)
    out.push_back({{"owner", OptionTable<Options>::owner},
                   {"name", row.name},
                   {"kind", to_string(row.kind)},
                   {"lo", bound(row.lo)},
                   {"hi", bound(row.hi)},
                   {"doc", row.doc}});
}

}  // namespace

std::string option_fields() {
  json out = json::array();
  add_table<LoopRecipe>(out);
  add_table<SearchSpace>(out);
  add_table<MatchOptions>(out);
  add_table<SweepOptions>(out);
  add_table<FitOptions>(out);
  add_table<MemoryLayout>(out);
  add_table<TimeOptions>(out);
  return out.dump();
}

}  // namespace smelt::python
