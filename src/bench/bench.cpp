// run_bench(): picks a backend, checks the options and the CPU time bound,
// and runs the plan. Backends other than the CPU reference are registered at
// run time by the program that links them, so the library needs no CUDA.
#include <algorithm>
#include <array>
#include <mutex>
#include <new>
#include <stdexcept>
#include <utility>

#include <fmt/format.h>

#include "smelt/bench.hpp"
#include "smelt/bench_backend.hpp"
#include "smelt/bench_registry.hpp"
#include "smelt/count.hpp"
#include "smelt/detail/excerpt.hpp"
#include "smelt/error.hpp"
#include "util/enum_names.hpp"
#include "util/mention.hpp"

namespace smelt {
namespace {

using i64 = std::int64_t;

// The time bound's rate: one run's analytic FLOPs at 2 GFLOP/s. Eigen runs the
// reference at about 25-50 GFLOP/s on one core of a current x86 server (release
// build; examples/tiny-moe.json at 512 tokens: 30), so one run at this rate
// stands for the whole default benchmark (3 warm-up and 20 timed runs and the
// float64 check) with room to spare; a Debug build is slower.
constexpr double kCpuFlopsPerSecond = 2e9;
constexpr double kCpuSecondsBound = 60;
constexpr double kCpuBytesBound = 8.0 * (1 << 30);
// CUDA runs default to this many tokens (the realistic shape).
constexpr i64 kCudaDefaultTokens = 32768;

constexpr detail::EnumNames<BenchBackendKind, 3> kNames{
    {{BenchBackendKind::automatic, "auto"}, {BenchBackendKind::cpu, "cpu"}, {BenchBackendKind::cuda, "cuda"}}};

struct Registry {
  std::mutex mutex;
  std::vector<std::shared_ptr<BenchBackend>> backends;

  std::shared_ptr<BenchBackend> find(std::string_view name) {
    std::lock_guard lock(mutex);
    for (const auto& b : backends)
      if (b->name() == name) return b;
    return nullptr;
  }
};

Registry& registry() {
  static Registry r;
  return r;
}

std::shared_ptr<BenchBackend> choose(BenchBackendKind kind) {
  std::shared_ptr<BenchBackend> cuda = registry().find("cuda");
  if (kind == BenchBackendKind::cuda) {
    if (!cuda)
      throw cuda_error(Violation("BenchOptions::backend", "\"cuda\"", "unavailable: no CUDA backend in this build"));
    if (auto why = cuda->unavailable())
      throw cuda_error(Violation("BenchOptions::backend", "\"cuda\"", "unavailable: " + *why));
    return cuda;
  }
  if (kind == BenchBackendKind::automatic && cuda && !cuda->unavailable()) return cuda;
  std::shared_ptr<BenchBackend> cpu = registry().find("cpu");
  return cpu ? cpu : make_cpu_backend();
}

void check_cpu_time(const LayerPlan& plan, const BenchOptions& o) {
  const double estimate = plan.analytic_flops / kCpuFlopsPerSecond;
  if (estimate <= kCpuSecondsBound || o.force) return;
  throw config_error(
      fmt::format("estimated CPU time {:.0f} s exceeds {:.0f} s ({:.1f} GFLOP at about {:.0f} GFLOP/s): use fewer "
                  "{} or {}",
                  estimate, kCpuSecondsBound, plan.analytic_flops / 1e9, kCpuFlopsPerSecond / 1e9,
                  detail::mention("BenchOptions::tokens"), detail::mention("BenchOptions::force")));
}

constexpr double kGiB = double(1 << 30);

// The reference holds every layer's weights in float32 and again in float64.
double cpu_weight_bytes(const LayerPlan& plan) {
  return static_cast<double>(count(plan.config).params.non_embedding) * (sizeof(float) + sizeof(double));
}

// Weights and the activations of the plan (LayerPlan::activation_bytes)
// together must fit the bound unless BenchOptions::force.
void check_cpu_memory(const LayerPlan& plan, const BenchOptions& o) {
  if (o.force) return;
  const double weights = cpu_weight_bytes(plan);
  const double activations = static_cast<double>(plan.activation_bytes);
  if (weights > kCpuBytesBound)
    throw config_error(fmt::format(
        "the CPU reference needs about {:.1f} GiB for the weights of {:.3g} parameters (float32 and float64); more "
        "than {:.0f} GiB: use a smaller config or {}",
        weights / kGiB, weights / (sizeof(float) + sizeof(double)), kCpuBytesBound / kGiB,
        detail::mention("BenchOptions::force")));
  if (weights + activations > kCpuBytesBound)
    throw config_error(fmt::format(
        "the CPU reference needs up to about {:.1f} GiB for the activations of {} (and {:.1f} GiB for "
        "the weights); more than {:.0f} GiB: use fewer {} or {}",
        activations / kGiB, detail::mention("BenchOptions::tokens", fmt::format("{}", plan.tokens)), weights / kGiB,
        kCpuBytesBound / kGiB, detail::mention("BenchOptions::tokens"), detail::mention("BenchOptions::force")));
}

}  // namespace

std::string_view to_string(BenchBackendKind v) { return detail::name_of(kNames, v); }
BenchBackendKind parse_bench_backend(std::string_view s, std::string_view field) {
  return detail::parse_of(kNames, s, field);
}

void register_bench_backend(std::shared_ptr<BenchBackend> backend) {
  if (!backend) throw std::invalid_argument("register_bench_backend: null backend");
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  const std::string name = backend->name();
  auto same = std::find_if(r.backends.begin(), r.backends.end(), [&](const auto& b) { return b->name() == name; });
  if (same != r.backends.end())
    *same = std::move(backend);
  else
    r.backends.push_back(std::move(backend));
}

BenchResult run_bench(const ModelConfig& config, const BenchOptions& options) {
  const std::shared_ptr<BenchBackend> backend = choose(options.backend);
  BenchOptions o = options;
  const bool cpu = backend->name() == "cpu";
  // The CUDA default: the largest whole number of sequences within 32768
  // tokens, so that a default never fails the multiple-of-context rule.
  if (!cpu && o.tokens == 0 && o.context >= 0) {
    const i64 context = o.context > 0 ? o.context : std::min(config.context_length, kCudaDefaultTokens);
    if (context > 0) o.tokens = std::max<i64>(1, kCudaDefaultTokens / context) * context;
  }
  const LayerPlan plan = make_layer_plan(config, o);
  if (cpu) {
    check_cpu_memory(plan, o);
    check_cpu_time(plan, o);
  }
  // Past the bounds (BenchOptions::force, or a backend's own estimate short of the truth)
  // an allocation can still fail: say so as the input's fault, not a crash.
  try {
    return backend->run(plan, o);
  } catch (const std::bad_alloc&) {
    throw config_error(fmt::format(
        "out of memory: the {} backend could not allocate what {} needs at {} (on the CPU reference "
        "about {:.1f} GiB of weights and up to {:.1f} GiB of activations): use fewer {} or a smaller "
        "config",
        backend->name(), detail::name_excerpt(config.name),
        detail::mention("BenchOptions::tokens", fmt::format("{}", plan.tokens)), cpu_weight_bytes(plan) / kGiB,
        static_cast<double>(plan.activation_bytes) / kGiB, detail::mention("BenchOptions::tokens")));
  }
}

}  // namespace smelt
