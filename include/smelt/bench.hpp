// The MoE-layer microbenchmark: runs the blocks of a ModelConfig on a backend
// (an Eigen CPU reference, or CUDA when built and a device is present), and
// reports time, throughput and the FLOPs it executed three ways beside the
// analytic count of `count()` (docs/bench.md).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "smelt/config.hpp"
#include "smelt/option_fields.hpp"

namespace smelt {

enum class BenchBackendKind { automatic, cpu, cuda };
std::string_view to_string(BenchBackendKind v);
BenchBackendKind parse_bench_backend(std::string_view s, std::string_view field);

struct BenchOptions {
  BenchBackendKind backend = BenchBackendKind::automatic;  // cuda when a device is present, else cpu
  std::int64_t tokens = 0;        // tokens per run, a multiple of the context; 0: one sequence (CPU) or 32768 (CUDA)
  std::int64_t context = 0;       // sequence length for causal attention; 0: min(config, tokens)
  bool moe_only = false;          // the MoE (or FFN) sublayer alone, without attention
  bool balanced = false;          // route tokens round-robin so every expert gets the same load
  std::int64_t warmup = 3;        // in [0, 1000]
  std::int64_t repetitions = 20;  // in [1, 1000]: timed runs; the median is reported
  bool force = false;             // run a CPU benchmark past its time and memory bounds (docs/bench.md)
  std::uint64_t seed = 20261130;
};

// BenchOptions' fields (include/smelt/option_fields.hpp).
template <>
struct OptionTable<BenchOptions> {
  static constexpr std::string_view owner = "BenchOptions";
  using Field = OptionField<BenchOptions, BenchBackendKind, std::int64_t, bool, std::uint64_t>;
  static constexpr auto fields = std::to_array<Field>({
      {"backend", OptionKind::word, &BenchOptions::backend, 0, 0,
       "cpu, cuda or auto (default: cuda when a device is present, else cpu)"},
      {"tokens", OptionKind::integer, &BenchOptions::tokens, 0, kUnbounded,
       "Tokens per run, a multiple of {context} (default: one sequence on the CPU, 32768 on CUDA)"},
      {"context", OptionKind::integer, &BenchOptions::context, 0, kUnbounded,
       "Sequence length for causal attention (default: the config's, at most the tokens)"},
      {"moe_only", OptionKind::boolean, &BenchOptions::moe_only, 0, 1,
       "Run the MoE (or FFN) sublayer alone, without attention"},
      {"balanced", OptionKind::boolean, &BenchOptions::balanced, 0, 1,
       "Give every expert the same load instead of routing"},
      {"warmup", OptionKind::integer, &BenchOptions::warmup, 0, 1000, "Untimed runs first"},
      {"repetitions", OptionKind::integer, &BenchOptions::repetitions, 1, 1000, "Timed runs; the median is reported"},
      {"force", OptionKind::boolean, &BenchOptions::force, 0, 1,
       "Run a CPU benchmark past its time and memory bounds (docs/bench.md)"},
      {"seed", OptionKind::integer, &BenchOptions::seed, 0, kUnbounded, "Seed of the weights and inputs"},
  });
};

// The work of one run of the plan, counted three ways.
struct FlopCounts {
  double analytic = 0;            // from count(): per-token terms x tokens, attention at the exact causal sum
  double accounted = 0;           // sum of 2 m n k over the products actually launched, with the routed token counts
  std::optional<double> counter;  // hardware counters, where the machine permits
  std::string counter_note;       // why counter is absent, or which metric it read
};

struct BenchResult {
  std::string model;
  std::string backend;           // "cpu" or "cuda"
  std::string device;            // CPU or GPU name
  std::string expert_gemm_path;  // how expert products ran (e.g. "eigen", "cublasGemmGroupedBatchedEx")
  std::int64_t tokens = 0;
  std::int64_t context = 0;
  std::int64_t layer_visits = 0;  // blocks executed per run (looped layers once per visit)
  bool moe_only = false;
  double seconds = 0;  // median time of one run
  double seconds_per_token = 0;
  double tflops = 0;        // accounted FLOPs / seconds / 1e12
  double dense_tflops = 0;  // dense GEMM rate measured in the same run (0 when not measured)
  double pct_of_dense = 0;
  FlopCounts flops;                         // every product of the run
  FlopCounts gemm_flops;                    // the weight GEMM terms only (projections, router, experts, FFNs)
  double expert_gemm_tflops = 0;            // expert GEMMs alone, where timed apart (0 otherwise)
  std::vector<std::int64_t> expert_tokens;  // tokens each expert received in the first MoE visit
  double load_imbalance = 0;                // max / mean of expert_tokens (1 = balanced)
  double max_rel_error = 0;                 // against the reference (float64 on CPU; the CPU backend for CUDA)
  bool correct = false;                     // max_rel_error within the backend's tolerance
  double tolerance = 0;
};

// Validates the options against the config (exit-code-2 errors: token counts
// of 0, contexts beyond the config's, MLA attention, a CPU run estimated past
// the time bound without `force`, a device too small) and runs the benchmark.
BenchResult run_bench(const ModelConfig& config, const BenchOptions& options);

}  // namespace smelt
