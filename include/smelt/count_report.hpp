// The count report: a counted model (its config, its cost and its sparsity) as
// ordered JSON with a leading "schema_version" (kCountReportSchemaVersion,
// include/smelt/schema_version.hpp), stable key order and numbers as numbers,
// so the same input gives the same bytes (docs/json-schema.md); and the runs
// CSV that `fit --form smelt` reads.
#pragma once

#include <string>
#include <vector>

#include "smelt/config.hpp"
#include "smelt/convention.hpp"
#include "smelt/count.hpp"
#include "smelt/schema_version.hpp"
#include "smelt/sparsity.hpp"

namespace smelt {

// Made by count_model(), which fills all three (a CountedModel built by hand
// from a config and its count alone would report a zero sparsity).
struct CountedModel {
  ModelConfig config;
  CostReport cost;
  Sparsity sparsity;
};

struct CountReportOptions {
  // Also writes "layers", one object per layer, after "layer_runs" (which
  // holds every layer in runs, include/smelt/layer_runs.hpp, either way).
  bool every_layer = false;
};

// Counts `config` and its sparsity against `reference` (nullptr: the config
// with every expert active). The reference is counted at the model's context
// and with the same options, so F and F0 are comparable.
CountedModel count_model(ModelConfig config, const CountOptions& options = {}, const ModelConfig* reference = nullptr);

// One object for one model, an array of such objects for several. With
// another convention, "flops_per_token" holds that convention's terms instead
// (docs/json-schema.md).
std::string count_report_json(const std::vector<CountedModel>& models, Convention convention = Convention::smelt,
                              const CountReportOptions& options = {});

// The columns of a runs file that `fit --form smelt` reads, one row per model:
// model (its name), N (non-embedding parameters), F (training FLOPs per token
// without the LM head: 3 x (forward non-embedding + MTP)) and S (the model's
// sparsity); a header line first. A run's D (or C) and loss are the trainer's
// to add (docs/scaling.md).
std::string count_runs_csv(const std::vector<CountedModel>& models);

}  // namespace smelt
