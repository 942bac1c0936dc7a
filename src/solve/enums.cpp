// Word forms of the solver's enums, shared by the CLI and JSON.
#include "smelt/solve.hpp"
#include "smelt/sweep.hpp"
#include "util/enum_names.hpp"

namespace smelt {
namespace {

using detail::EnumNames;
using detail::name_of;
using detail::parse_of;

constexpr EnumNames<FfnScaling, 3> kFfnScaling{
    {{FfnScaling::proportional, "proportional"}, {FfnScaling::fixed, "fixed"}, {FfnScaling::searched, "searched"}}};
constexpr EnumNames<Budget, 5> kBudget{{{Budget::flops, "flops"},
                                        {Budget::params, "params"},
                                        {Budget::kv, "kv"},
                                        {Budget::memory, "memory"},
                                        {Budget::time, "time"}}};
constexpr EnumNames<SweepKind, 3> kSweepKind{
    {{SweepKind::baseline, "baseline"}, {SweepKind::loop, "loop"}, {SweepKind::depth, "depth"}}};

}  // namespace

std::string_view to_string(FfnScaling v) { return name_of(kFfnScaling, v); }
FfnScaling parse_ffn_scaling(std::string_view s, std::string_view field) { return parse_of(kFfnScaling, s, field); }

std::string_view to_string(Budget v) { return name_of(kBudget, v); }
Budget parse_budget(std::string_view s, std::string_view field) { return parse_of(kBudget, s, field); }

std::string_view to_string(SweepKind v) { return name_of(kSweepKind, v); }

}  // namespace smelt
