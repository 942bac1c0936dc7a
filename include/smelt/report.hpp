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

inline constexpr int kReportSchemaVersion = 1;

struct CountedModel {
  ModelConfig config;
  CostReport cost;
};

// One object for one model, an array of such objects for several. With
// another convention, "flops_per_token" holds that convention's terms instead
// (docs/json-schema.md).
std::string count_report_json(const std::vector<CountedModel>& models, Convention convention = Convention::smelt);

}  // namespace smelt
