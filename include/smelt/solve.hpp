// The SMELT solver: given a Baseline and a loop recipe, find the looped config
// whose per-token FLOPs, non-embedding parameters and KV cache match the
// Baseline's, over a discrete, hardware-aligned SearchSpace. The answer is the
// exact optimum of the declared space (docs/solver.md): mismatches are compared
// as exact fractions, never as rounded floating point.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "smelt/checked_config.hpp"
#include "smelt/config.hpp"
#include "smelt/error.hpp"
#include "smelt/memory.hpp"
#include "smelt/option_fields.hpp"
#include "smelt/recipe.hpp"
#include "smelt/time.hpp"

namespace smelt {

// An inclusive integer range; lo == hi pins a knob.
struct KnobRange {
  std::int64_t lo = 0;
  std::int64_t hi = 0;

  friend bool operator==(const KnobRange&, const KnobRange&) = default;
};

// How FFN widths (expert, shared expert, dense) follow the hidden size:
// proportional to H, fixed at the Baseline's, or searched (the expert width is
// a knob, SearchSpace::expert_width; shared-expert and dense widths keep their
// ratio to it, docs/solver.md).
enum class FfnScaling { proportional, fixed, searched };

// A closed range of real ratios [lo, hi].
struct RatioRange {
  double lo = 0;
  double hi = 0;

  friend bool operator==(const RatioRange&, const RatioRange&) = default;
};
std::string_view to_string(FfnScaling v);
FfnScaling parse_ffn_scaling(std::string_view s, std::string_view field);

// Each knob is pinned, ranged, or left to its default domain (docs/solver.md).
// Knob values and alignments lie in [1, 2^24] (expert counts and
// align_experts in [1, 2^20]), checked before any arithmetic on them; the
// space is sized before it is listed: at most 2^20 attention geometries and
// 5e7 geometry x hidden-size pairs.
//
// The attention of a GQA Baseline follows shape rules, not per-factor boxes:
// query heads free, KV heads any divisor of the query heads, head_dim up to
// FlashAttention's largest head size, and every candidate's attention width
// (query heads x head_dim) within attention_ratio x H. An MLA Baseline keeps
// its attention.
struct SearchSpace {
  std::optional<KnobRange> hidden;   // default: multiples of align_hidden in [H/4, H] ([H, 2H] if shallower)
  std::optional<KnobRange> experts;  // default: multiples of align_experts in [top_k, 8E]
  // Default: multiples of align_head_dim in [min_head_dim, max_head_dim], or up
  // to the Baseline's head_dim when that is larger; a range above that is an error.
  std::optional<KnobRange> head_dim;
  std::optional<KnobRange> kv_heads;  // default: every divisor of the query heads ([1, q])
  // Default (free_heads): every count whose width some head_dim fits with some
  // H; free_heads = false keeps the Baseline's (then heads is a contradiction).
  std::optional<KnobRange> heads;
  std::optional<KnobRange> expert_width;  // ffn = searched only; default: multiples of align_ffn in [W/8, 2W]
  std::int64_t align_hidden = 64;
  std::int64_t align_experts = 8;
  std::int64_t align_head_dim = 8;
  std::int64_t min_head_dim = 32;
  std::int64_t max_head_dim = 256;  // FlashAttention's largest head size (docs/solver.md), in [min_head_dim, 2^24]
  // Attention width (query heads x head_dim) over the hidden size, for every
  // candidate of a GQA Baseline: finite, 1e-6 <= lo <= hi <= 1e6, compared
  // exactly after rounding to 9 decimals (0.7 is 7/10). The default [0.5, 2]
  // widens to hold the Baseline's own ratio; a range set by the caller is kept.
  RatioRange attention_ratio{0.5, 2.0};
  std::int64_t align_ffn = 16;
  bool free_heads = true;
  FfnScaling ffn = FfnScaling::proportional;
};

// SearchSpace's fields (include/smelt/option_fields.hpp): the knob ranges'
// bounds are the config fields' they become; alignments are checked first.
template <>
struct OptionTable<SearchSpace> {
  static constexpr std::string_view owner = "SearchSpace";
  static constexpr double kMaxSize = 1 << 24;     // widths, head sizes and alignments (FlashAttention: max_head_dim)
  static constexpr double kMaxExperts = 1 << 20;  // routed experts
  using Field = OptionField<SearchSpace, std::optional<KnobRange>, std::int64_t, RatioRange, bool, FfnScaling>;
  static constexpr auto fields = std::to_array<Field>({
      {"hidden", OptionKind::range, &SearchSpace::hidden, 1, kMaxSize,
       "Hidden size: a value or LO:HI (default: multiples of {align_hidden} in [H/4, H])"},
      {"experts", OptionKind::range, &SearchSpace::experts, 1, kMaxExperts,
       "Routed experts: a value or LO:HI (default: multiples of {align_experts} in [top_k, 8E])"},
      {"head_dim", OptionKind::range, &SearchSpace::head_dim, 1, kMaxSize,
       "Head size: a value or LO:HI (default: multiples of {align_head_dim} in [{min_head_dim}, {max_head_dim}])"},
      {"kv_heads", OptionKind::range, &SearchSpace::kv_heads, 1, kMaxSize,
       "KV heads: a value or LO:HI, divisors of the query heads (default: any divisor)"},
      {"heads", OptionKind::range, &SearchSpace::heads, 1, kMaxSize,
       "Query heads: a value or LO:HI (default: free, every count whose width fits {attention_ratio})"},
      {"free_heads", OptionKind::boolean, &SearchSpace::free_heads, 0, 1,
       "Let the query heads move (the default); false keeps the Baseline's"},
      {"max_head_dim", OptionKind::integer, &SearchSpace::max_head_dim, 1, kMaxSize,
       "Largest default head size, at least {min_head_dim} (FlashAttention's limit is 256)"},
      {"attention_ratio", OptionKind::ratio_range, &SearchSpace::attention_ratio, 1e-6, 1e6,
       "Query heads x head_dim over H: a ratio or LO:HI (the default widens to the Baseline's own)"},
      {"align_hidden", OptionKind::integer, &SearchSpace::align_hidden, 1, kMaxSize,
       "Hidden sizes are multiples of this"},
      {"align_experts", OptionKind::integer, &SearchSpace::align_experts, 1, kMaxExperts,
       "Expert counts are multiples of this"},
      {"align_head_dim", OptionKind::integer, &SearchSpace::align_head_dim, 1, kMaxSize,
       "Head sizes are multiples of this"},
      {"min_head_dim", OptionKind::integer, &SearchSpace::min_head_dim, 1, kMaxSize, "Smallest head size"},
      {"align_ffn", OptionKind::integer, &SearchSpace::align_ffn, 1, kMaxSize, "FFN widths round to multiples of this"},
      {"ffn", OptionKind::word, &SearchSpace::ffn, 0, 0,
       "FFN widths: proportional to H, fixed, or searched (see {expert_width})"},
      {"expert_width", OptionKind::range, &SearchSpace::expert_width, 1, kMaxSize,
       "Routed expert width with {ffn} searched: a value or LO:HI (default: multiples of {align_ffn} in [W/8, 2W])"},
  });
};

enum class Budget { flops, params, kv, memory, time };
std::string_view to_string(Budget v);
Budget parse_budget(std::string_view s, std::string_view field);

struct MatchOptions {
  std::vector<Budget> match{Budget::flops, Budget::params, Budget::kv};
  bool flops_with_head = false;        // FLOPs budget includes the LM head's 2HV
  std::vector<std::int64_t> contexts;  // each in [1, 2^30], at most 64; every budget is matched at each; empty: the
                                       // Baseline's context
  double tolerance_pct = 1.0;          // in [0, 1e6]
  std::int64_t top = 5;                // >= 1: distinct candidates returned, the best and top - 1 alternatives
  bool relaxations = true;             // when the best misses the tolerance, solve each single relaxation
                                       // (MatchResult::relaxations, docs/solver.md section 8)
  // Per-GPU memory (smelt::memory) of every candidate and the Baseline is
  // reported under memory_layout; with a memory_limit a candidate whose
  // memory exceeds it, or that the layout cannot shard, is dropped
  // (docs/solver.md section 5, "Memory per GPU"); Budget::memory matches it.
  DeviceMemory memory_limit;   // bytes, or a named device; 0: no limit
  MemoryLayout memory_layout;  // its own field table (MemoryLayout)
  // With a hardware spec (a shipped name or a spec file, smelt::hardware_spec),
  // the predicted training and decode time per token (smelt::step_time under
  // memory_layout and time_options) of every candidate beside the Baseline's;
  // with a time_limit a candidate whose training time per token exceeds that
  // multiple of the Baseline's is dropped (docs/solver.md section 5, "Time per
  // token"); Budget::time matches the training time.
  std::string hardware;      // empty: no time figures
  double time_limit = 0;     // a ratio to the Baseline's training time per token; 0: no limit
  TimeOptions time_options;  // its own field table (TimeOptions)
};

// MatchOptions' fields (include/smelt/option_fields.hpp).
template <>
struct OptionTable<MatchOptions> {
  static constexpr std::string_view owner = "MatchOptions";
  using Field = OptionField<MatchOptions, std::vector<Budget>, bool, std::vector<std::int64_t>, double, std::int64_t,
                            DeviceMemory, std::string>;
  static constexpr auto fields = std::to_array<Field>({
      {"match", OptionKind::word_list, &MatchOptions::match, 0, 0,
       "Budgets to match: flops, params, kv, memory (per-GPU bytes under the memory layout), time (training "
       "seconds per token on {hardware})"},
      {"flops_with_head", OptionKind::boolean, &MatchOptions::flops_with_head, 0, 1,
       "Include the LM head in the FLOPs budget"},
      {"contexts", OptionKind::integer_list, &MatchOptions::contexts, 1, 1 << 30,
       "Context lengths in tokens to match at, at most 64 (default: the Baseline's)"},
      {"tolerance_pct", OptionKind::number, &MatchOptions::tolerance_pct, 0, 1e6,
       "Largest acceptable mismatch in percent; above it, no candidate is within tolerance"},
      {"top", OptionKind::integer, &MatchOptions::top, 1, kUnbounded,
       "Candidates to report: the best and top - 1 alternatives"},
      {"relaxations", OptionKind::boolean, &MatchOptions::relaxations, 0, 1,
       "When the best misses the tolerance, solve each single relaxation of the space"},
      {"memory_limit", OptionKind::word, &MatchOptions::memory_limit, 0, 0,
       "Drop candidates whose per-GPU memory under the memory layout exceeds this: bytes with a unit (80GiB) or "
       "a device (h100, h200, b200, a100-40, a100-80, mi300x)"},
      {"hardware", OptionKind::word, &MatchOptions::hardware, 0, 0,
       "Predict each candidate's training and decode time per token on this device: a name (h100, h200, b200, "
       "a100-80, mi300x) or a spec file (default: no time figures)"},
      {"time_limit", OptionKind::number, &MatchOptions::time_limit, 0, 1e6,
       "Drop candidates whose training time per token on {hardware} exceeds this multiple of the Baseline's "
       "(1.1: at most 10% slower; 0: no limit)"},
  });
};

// One budget of one candidate at one context.
struct BudgetValue {
  double baseline = 0;
  double candidate = 0;
  double mismatch_pct = 0;  // 100 x (candidate - baseline) / baseline
};

struct BudgetsAt {
  std::int64_t context = 0;
  BudgetValue flops;                // per token, non-embedding unless flops_with_head
  BudgetValue flops_with_head;      // per token, LM head included (always reported)
  BudgetValue flops_non_embedding;  // per token, LM head excluded (always reported)
  BudgetValue params;               // non-embedding parameters
  BudgetValue kv;                   // KV cache bytes per token
};

// The knob values of a candidate.
struct Knobs {
  std::int64_t hidden = 0;
  std::int64_t experts = 0;
  std::int64_t heads = 0;
  std::int64_t kv_heads = 0;
  std::int64_t head_dim = 0;
  std::int64_t expert_width = 0;
  std::int64_t shared_width = 0;
  std::int64_t dense_width = 0;

  friend bool operator==(const Knobs&, const Knobs&) = default;
};

// The knob values a config holds: the Baseline's own, or a candidate's (then
// equal to Candidate::knobs).
Knobs knobs_of(const ModelConfig& config);

// One way to split an attention width into heads: query heads, KV heads and
// head size (the knobs' names).
struct HeadSplit {
  std::int64_t heads = 0;
  std::int64_t kv_heads = 0;
  std::int64_t head_dim = 0;

  friend bool operator==(const HeadSplit&, const HeadSplit&) = default;
};

// Candidates are distinct (docs/solver.md section 6): no two share the hidden
// size, expert count, FFN widths, attention width heads x head_dim and KV
// width kv_heads x head_dim. Candidates that share all five differ only in how
// the two widths are split into heads, and every budget depends on the widths
// alone (but for per-head QK norm and attention sinks, a few weights per
// layer): the best split of them is the candidate, and head_splits lists all.
struct Candidate {
  ModelConfig config;
  Knobs knobs;
  // Every head split of the space with this candidate's five values, its own
  // first, then the others in the solver's tie-break order; at least one.
  std::vector<HeadSplit> head_splits;
  std::vector<BudgetsAt> budgets;   // one per context
  double max_abs_mismatch_pct = 0;  // the objective, over the matched budgets and contexts
  std::int64_t executed_layers = 0;
  double depth_to_width = 0;  // executed layers / hidden size
  std::int64_t active_params = 0;
  // Per-GPU bytes under MatchOptions::memory_layout (MemoryReport::total)
  // against the Baseline's; absent, with memory_note saying why, where the
  // layout cannot shard the candidate or the Baseline.
  std::optional<BudgetValue> memory;
  std::string memory_note;
  // With MatchOptions::hardware: the predicted seconds per token of a training
  // step and of a decode step (TimeReport) against the Baseline's; absent, with
  // time_note saying why, where the layout cannot shard the candidate or the
  // Baseline (time_note is empty without a hardware spec).
  std::optional<BudgetValue> training_time;
  std::optional<BudgetValue> decode_time;
  std::string time_note;
};

// One field a relaxation changes, named as the library spells it, and its new
// value as text: {"SearchSpace::align_head_dim", "4"}; "default" where a
// pinned knob is dropped to its default domain.
struct FieldChange {
  std::string field;
  std::string value;

  friend bool operator==(const FieldChange&, const FieldChange&) = default;
};

// A single relaxation of the declared space or recipe, solved again (top = 1,
// no nested relaxations): the best largest mismatch it reaches, or why its
// space was refused (docs/solver.md section 8).
struct Relaxation {
  std::vector<FieldChange> changes;   // usually one; freeing pinned heads also sets free_heads
  bool solved = false;                // false: the relaxed space was refused, see error
  double max_abs_mismatch_pct = 0;    // the relaxed best's objective, when solved
  bool within_tolerance = false;      // decided exactly, as MatchResult::within_tolerance
  Knobs knobs;                        // the relaxed best's knobs, when solved
  std::string error;                  // the config_error's lines joined by "; ", when refused
  std::vector<Violation> violations;  // the same, one violation each, with their fields and mentions
};

struct MatchResult {
  ModelConfig baseline;
  LoopConfig loop;
  SearchSpace space;
  MatchOptions options;
  std::int64_t baseline_executed_layers = 0;
  std::int64_t baseline_active_params = 0;
  std::vector<Candidate> candidates;  // best first, distinct: candidates[0] is the answer
  bool within_tolerance = false;
  // When not within tolerance: which budget, and why; the option fields each
  // names are mentions (smelt/error.hpp).
  std::vector<Message> why;
  // When not within tolerance (and MatchOptions::relaxations): each single
  // relaxation, best first; refused ones last.
  std::vector<Relaxation> relaxations;
  std::int64_t space_size = 0;  // candidates in the declared space
  std::int64_t evaluated = 0;   // configs the search counted
  // With MatchOptions::memory_limit: candidates that would have entered the
  // list but exceeded the limit or could not be sharded by the layout (each
  // replaced by the closest one with fewer experts that fits, if any).
  std::int64_t dropped_for_memory = 0;
  // The same under MatchOptions::time_limit: candidates over it.
  std::int64_t dropped_for_time = 0;
};

// Throws config_error (exit code 2 in the CLI) for an empty or contradictory
// space or recipe. A result outside the tolerance is returned, not thrown.
// A Baseline given as a ModelConfig is validated first (CheckedConfig); one
// read by read_checked_config (include/smelt/config_io.hpp) is not validated again.
MatchResult solve(const CheckedConfig& baseline, const LoopRecipe& recipe, const SearchSpace& space = {},
                  const MatchOptions& options = {});
MatchResult solve(const ModelConfig& baseline, const LoopRecipe& recipe, const SearchSpace& space = {},
                  const MatchOptions& options = {});

// The same answer by enumerating every candidate: for tests and benchmarks.
MatchResult solve_brute_force(const CheckedConfig& baseline, const LoopRecipe& recipe, const SearchSpace& space = {},
                              const MatchOptions& options = {});
MatchResult solve_brute_force(const ModelConfig& baseline, const LoopRecipe& recipe, const SearchSpace& space = {},
                              const MatchOptions& options = {});

}  // namespace smelt
