// Machine-readable reports: ordered JSON with a leading "schema_version",
// stable key order and numbers as numbers, so the same input gives the same
// bytes (docs/json-schema.md).
#pragma once

#include <string>
#include <vector>

#include "smelt/config.hpp"
#include "smelt/convention.hpp"
#include "smelt/cost.hpp"

namespace smelt {

// The version of the sweep and bench reports; the count report has its own.
inline constexpr int kReportSchemaVersion = 1;
// 2: layers are written as runs ("layer_runs"), every layer only on request.
inline constexpr int kCountReportSchemaVersion = 2;

struct CountedModel {
  ModelConfig config;
  CostReport cost;
};

struct CountReportOptions {
  // Also writes "layers", one object per layer, after "layer_runs" (which
  // holds every layer in runs, include/smelt/layer_runs.hpp, either way).
  bool every_layer = false;
};

// One object for one model, an array of such objects for several. With
// another convention, "flops_per_token" holds that convention's terms instead
// (docs/json-schema.md).
std::string count_report_json(const std::vector<CountedModel>& models, Convention convention = Convention::smelt,
                              const CountReportOptions& options = {});

}  // namespace smelt
