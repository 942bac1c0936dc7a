// Shared helpers of the Hugging Face import tests: the examples under
// examples/hf/ and the rules by which a count reproduces a published figure.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "smelt/config_io.hpp"
#include "smelt/count.hpp"
#include "smelt/error.hpp"
#include "smelt/file_io.hpp"

namespace smelt::test {

inline std::string example_path(const char* name) { return std::string(SMELT_SOURCE_DIR "/examples/hf/") + name; }

// The lines of the config_error that reading and counting a config.json raises; none when it counts.
inline std::vector<std::string> count_errors(const nlohmann::json& j) {
  try {
    (void)count(parse_hf_config(j.dump()));
  } catch (const config_error& e) {
    return e.lines();
  }
  return {};
}

inline nlohmann::json example_json(const char* name) {
  return nlohmann::json::parse(read_text_file(example_path(name)));
}

// Published figures are checked two ways: totals within 0.5%, and active
// counts within the published rounding, i.e. published - unit/2 <= ours <
// published + unit/2, where unit is the last published digit. Where a figure
// only reproduces by truncation (published <= ours < published + unit) the
// test says so. Active conventions: params.active counts one traversal with
// the input embedding and the output head; params.active_non_embedding counts
// neither; several labs count the head but not the embedding lookup, which is
// active_non_embedding + lm_head.
inline bool rounds_to(std::int64_t ours, double published, double unit) {
  const auto x = static_cast<double>(ours);
  return x >= published - unit / 2 && x < published + unit / 2;
}

inline bool truncates_to(std::int64_t ours, double published, double unit) {
  const auto x = static_cast<double>(ours);
  return x >= published && x < published + unit;
}

inline std::int64_t head_not_embedding(const CostReport& r) { return r.params.active_non_embedding + r.params.lm_head; }

}  // namespace smelt::test
