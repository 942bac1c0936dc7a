// Machine-readable sweep reports: ordered JSON (schema_version first, one
// object per row with its native config) and CSV (a header line, then one line
// per row; RFC 4180 quoting only where a field needs it).
#pragma once

#include <string>
#include <vector>

#include "smelt/sweep.hpp"

namespace smelt {

// The CSV header, without its newline.
inline constexpr const char* kSweepCsvHeader =
    "kind,span_fraction,depth_multiplier,span,loops,depth,executed_layers,hidden_size,num_experts,num_heads,"
    "num_kv_heads,head_dim,flops_mismatch_pct,params_mismatch_pct,kv_mismatch_pct,max_abs_mismatch_pct,"
    "within_tolerance,depth_to_width,memory_bytes,memory_mismatch_pct,training_seconds_per_token,"
    "training_time_mismatch_pct";

// `match` gives the matched budgets, contexts (empty: the Baseline's) and tolerance.
std::string sweep_report_json(const ModelConfig& baseline, const std::vector<SweepRow>& rows,
                              const MatchOptions& match = {});
std::string sweep_report_csv(const std::vector<SweepRow>& rows);

}  // namespace smelt
