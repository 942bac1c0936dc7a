// Word forms of the solver's enums, shared by the CLI and JSON.
#include <fmt/format.h>

#include "smelt/error.hpp"
#include "smelt/solve.hpp"

namespace smelt {

std::string_view to_string(FfnScaling v) { return v == FfnScaling::fixed ? "fixed" : "proportional"; }

FfnScaling parse_ffn_scaling(std::string_view s, std::string_view field) {
  if (s == "proportional") return FfnScaling::proportional;
  if (s == "fixed") return FfnScaling::fixed;
  throw config_error(fmt::format("{} = \"{}\": must be one of proportional, fixed", field, s));
}

std::string_view to_string(Budget v) {
  switch (v) {
    case Budget::flops:
      return "flops";
    case Budget::params:
      return "params";
    case Budget::kv:
      return "kv";
  }
  return "?";
}

Budget parse_budget(std::string_view s, std::string_view field) {
  if (s == "flops") return Budget::flops;
  if (s == "params") return Budget::params;
  if (s == "kv") return Budget::kv;
  throw config_error(fmt::format("{} = \"{}\": must be one of flops, params, kv", field, s));
}

}  // namespace smelt
