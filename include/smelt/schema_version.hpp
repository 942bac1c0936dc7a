// The schema versions of smelt's JSON reports (docs/json-schema.md): each
// report writes its version first, as "schema_version". Here, apart from the
// reports themselves, so that a writer of one report includes none of the others.
#pragma once

namespace smelt {

// The version of the sweep and bench reports; the count and match reports have their own.
inline constexpr int kReportSchemaVersion = 1;
// The count report's: 2 since layers are written as runs ("layer_runs"),
// every layer only on request.
inline constexpr int kCountReportSchemaVersion = 2;
// The match report's: 3 (2: relaxations, max_head_dim, attention_ratio;
// 3: distinct candidates with their head splits).
inline constexpr int kMatchReportSchemaVersion = 3;
// The memory report's: 2 (2: a stage's layer visits as runs, "visit_runs",
// with their count, "layer_visits", and its layers as "first_layer" and
// "last_layer"; 1 wrote one row per visit and every layer).
inline constexpr int kMemoryReportSchemaVersion = 2;
// The time report's: 2 (2: one op row per kind of layer visit, `times`
// counting its visits, and `recomputed`).
inline constexpr int kTimeReportSchemaVersion = 2;
// The calibration's (bench calibrate): 1.
inline constexpr int kCalibrationSchemaVersion = 1;

}  // namespace smelt
