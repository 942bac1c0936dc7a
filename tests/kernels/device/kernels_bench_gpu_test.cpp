// GPU test of the CUDA benchmark backend (CTest label "gpu"; exit 77, reported
// as skipped, where no device exists): the router/permutation kernels against
// a host computation, then small plans through CudaBackend::run, which must be
// correct against the CPU reference and account exactly the analytic
// weight-GEMM FLOPs; and a config too large for the device must be refused.
// With --sanitize: the routing kernels and one untimed pass of each small plan
// through both expert paths, nothing else (no timing, no 8192^3 dense-rate
// product), small enough to run under compute-sanitizer.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "backend/cuda_backend.hpp"
#include "backend/device_weights.hpp"
#include "backend/layer_runner.hpp"
#include "device/cuda_check.hpp"
#include "device/device.hpp"
#include "device/device_buffer.hpp"
#include "device/gemm.hpp"
#include "device/layer_kernels.hpp"
#include "smelt/bench_weights.hpp"
#include "smelt/error.hpp"
#include "test_configs.hpp"

using namespace smelt;
using namespace smelt::test;
using kernels::DeviceBuffer;

namespace {

int failures = 0;

void expect(bool ok, const std::string& what) {
  if (!ok) {
    std::printf("FAILED: %s\n", what.c_str());
    ++failures;
  }
}

template <class T>
DeviceBuffer to_device(const std::vector<T>& v) {
  DeviceBuffer b(v.size() * sizeof(T));
  SMELT_CUDA_CALL(cudaMemcpy(b.as<void>(), v.data(), b.bytes(), cudaMemcpyHostToDevice));
  return b;
}

template <class T>
std::vector<T> to_host(const DeviceBuffer& b, std::size_t n) {
  std::vector<T> v(n);
  SMELT_CUDA_CALL(cudaMemcpy(v.data(), b.as<void>(), n * sizeof(T), cudaMemcpyDeviceToHost));
  return v;
}

// Router top-k, offsets and permutation on `tokens` rows of logits, against the host.
void check_routing(const char* name, std::vector<float> logits, int tokens, int experts, int k, bool sigmoid,
                   bool balanced) {
  const int hidden = 24;  // a multiple of 8: the 16-byte row copies
  const auto n = static_cast<std::size_t>(tokens);
  const auto pairs = n * static_cast<std::size_t>(k);
  std::vector<std::uint16_t> x(n * hidden);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = static_cast<std::uint16_t>(i % 65521);
  const DeviceBuffer d_logits = to_device(logits), d_x = to_device(x);
  DeviceBuffer idx(pairs * 4), w(pairs * 4), slot(pairs * 4), xp(pairs * hidden * 2);
  DeviceBuffer counts(static_cast<std::size_t>(experts) * 4), offsets((static_cast<std::size_t>(experts) + 1) * 4),
      cursor(static_cast<std::size_t>(experts) * 4);
  SMELT_CUDA_CALL(cudaMemset(counts.as<void>(), 0, counts.bytes()));
  kernels::router_topk(d_logits.as<float>(), tokens, experts, k, sigmoid, balanced, idx.as<int>(), w.as<float>(),
                       counts.as<int>(), nullptr);
  kernels::expert_offsets(counts.as<int>(), experts, offsets.as<int>(), cursor.as<int>(), nullptr);
  kernels::permute_rows(d_x.as<kernels::bf16>(), tokens, hidden, k, idx.as<int>(), cursor.as<int>(), slot.as<int>(),
                        xp.as<kernels::bf16>(), nullptr);
  SMELT_CUDA_CALL(cudaDeviceSynchronize());
  const auto g_idx = to_host<int>(idx, pairs), g_slot = to_host<int>(slot, pairs);
  const auto g_w = to_host<float>(w, pairs);
  const auto g_counts = to_host<int>(counts, static_cast<std::size_t>(experts));
  const auto g_off = to_host<int>(offsets, static_cast<std::size_t>(experts) + 1);
  const auto g_xp = to_host<std::uint16_t>(xp, pairs * hidden);

  int bad_choice = 0, bad_weight = 0, bad_row = 0;
  std::vector<int> host_counts(static_cast<std::size_t>(experts), 0);
  for (std::size_t t = 0; t < n; ++t) {
    std::vector<double> score(static_cast<std::size_t>(experts));
    const float* row = &logits[t * static_cast<std::size_t>(experts)];
    const double top = *std::max_element(row, row + experts);
    double sum = 0;
    for (int e = 0; e < experts; ++e) sum += std::exp(static_cast<double>(row[e]) - top);
    for (int e = 0; e < experts; ++e)
      score[static_cast<std::size_t>(e)] = sigmoid ? 1 / (1 + std::exp(-static_cast<double>(row[e])))
                                                   : std::exp(static_cast<double>(row[e]) - top) / sum;
    std::vector<int> order(static_cast<std::size_t>(experts));
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
      return score[static_cast<std::size_t>(a)] > score[static_cast<std::size_t>(b)];
    });
    double chosen_sum = 0;
    for (int j = 0; j < k; ++j) {
      const int want = balanced ? static_cast<int>((t * static_cast<std::size_t>(k) + static_cast<std::size_t>(j)) %
                                                   static_cast<std::size_t>(experts))
                                : order[static_cast<std::size_t>(j)];
      const int got = g_idx[t * static_cast<std::size_t>(k) + static_cast<std::size_t>(j)];
      if (got != want && std::abs(score[static_cast<std::size_t>(got)] - score[static_cast<std::size_t>(want)]) > 1e-6)
        ++bad_choice;
      chosen_sum += score[static_cast<std::size_t>(want)];
      ++host_counts[static_cast<std::size_t>(got)];
    }
    for (int j = 0; j < k; ++j) {
      const std::size_t p = t * static_cast<std::size_t>(k) + static_cast<std::size_t>(j);
      const double want_w = score[static_cast<std::size_t>(g_idx[p])] / chosen_sum;
      if (std::abs(g_w[p] - want_w) > 1e-5) ++bad_weight;
      const int e = g_idx[p], s = g_slot[p];
      if (s < g_off[static_cast<std::size_t>(e)] || s >= g_off[static_cast<std::size_t>(e) + 1]) ++bad_row;
      for (int c = 0; c < hidden; ++c)
        if (g_xp[static_cast<std::size_t>(s) * hidden + static_cast<std::size_t>(c)] !=
            x[t * hidden + static_cast<std::size_t>(c)])
          ++bad_row;
    }
  }
  std::vector<int> sorted_slots(g_slot);
  std::sort(sorted_slots.begin(), sorted_slots.end());
  std::vector<int> all(pairs);
  std::iota(all.begin(), all.end(), 0);
  int offset = 0;
  bool offsets_ok = g_off[0] == 0;
  for (int e = 0; e < experts; ++e) {
    offsets_ok = offsets_ok && g_off[static_cast<std::size_t>(e)] == offset;
    offset += host_counts[static_cast<std::size_t>(e)];
  }
  expect(bad_choice == 0,
         std::string(name) + ": top-k choices differ from the host (" + std::to_string(bad_choice) + ")");
  expect(bad_weight == 0,
         std::string(name) + ": mixing weights differ from the host (" + std::to_string(bad_weight) + ")");
  expect(g_counts == host_counts, std::string(name) + ": expert histogram differs from the choices");
  expect(offsets_ok && g_off.back() == static_cast<int>(pairs), std::string(name) + ": offsets are not the prefix sum");
  expect(sorted_slots == all, std::string(name) + ": slots are not a permutation");
  expect(bad_row == 0, std::string(name) + ": permuted rows misplaced (" + std::to_string(bad_row) + ")");
  std::printf("routing %-16s %d tokens, %d experts, top-%d: %s\n", name, tokens, experts, k,
              bad_choice + bad_weight + bad_row == 0 ? "ok" : "FAILED");
}

void routing_tests() {
  std::mt19937 rng(7);
  std::normal_distribution<float> normal(0.f, 1.f);
  const auto random_logits = [&](int tokens, int experts) {
    std::vector<float> v(static_cast<std::size_t>(tokens) * static_cast<std::size_t>(experts));
    for (float& x : v) x = normal(rng);
    return v;
  };
  check_routing("softmax", random_logits(1000, 16), 1000, 16, 4, false, false);
  check_routing("sigmoid", random_logits(777, 160), 777, 160, 8, true, false);
  check_routing("balanced", random_logits(300, 12), 300, 12, 5, false, true);
  check_routing("many experts", random_logits(64, 2048), 64, 2048, 6, false, false);
  check_routing("ties", std::vector<float>(50 * 40, 0.25f), 50, 40, 3, false, false);  // lowest indices win
}

void run_case(kernels::CudaBackend& backend, const char* name, const ModelConfig& config, BenchOptions o) {
  o.backend = BenchBackendKind::cuda;
  o.warmup = 1;
  o.repetitions = 3;
  try {
    const LayerPlan plan = make_layer_plan(config, o);
    const BenchResult r = backend.run(plan, o);
    const auto& d = backend.last_detail();
    std::printf(
        "%-22s %5.3f ms  %6.1f TFLOP/s (dense %5.1f)  gemm acc %.0f ana %.0f  attn launched %.0f useful %.0f  "
        "rel err %.2e  imbalance %.2f  %s (grouped %.3f ms, streams %.3f ms)%s%s\n",
        name, r.seconds * 1e3, r.tflops, r.dense_tflops, r.gemm_flops.accounted, r.gemm_flops.analytic,
        d.attention_launched, d.attention_useful, r.max_rel_error, r.load_imbalance, r.expert_gemm_path.c_str(),
        d.grouped_ms, d.streams_ms, d.timed_with_sync ? " [timed with count copies]" : "",
        d.grouped_error.empty() ? "" : (" grouped failed: " + d.grouped_error).c_str());
    expect(r.correct, std::string(name) + ": not correct against the reference");
    expect(r.gemm_flops.accounted == r.gemm_flops.analytic, std::string(name) + ": GEMM FLOPs accounted != analytic");
    expect(r.flops.accounted - d.attention_launched + d.attention_useful == r.flops.analytic,
           std::string(name) + ": all FLOPs, attention at its kept part, != analytic");
    expect(r.seconds > 0 && r.dense_tflops > 0, std::string(name) + ": no timing");
    expect(!r.flops.counter && !r.gemm_flops.counter, std::string(name) + ": counters reported by this backend");
  } catch (const std::exception& e) {
    expect(false, std::string(name) + ": threw " + e.what());
  }
}

void refuses_too_large(kernels::CudaBackend& backend) {
  ModelConfig c = bench_moe();
  c.name = "gpu-too-large";
  c.hidden_size = 8192;
  c.moe.num_experts = 1024;
  c.moe.expert_width = 8192;  // 1024 x 3 x 8192^2 bf16 = 412 GB per layer
  BenchOptions o;
  o.backend = BenchBackendKind::cuda;
  o.tokens = o.context = 256;
  o.moe_only = true;
  try {
    (void)backend.run(make_layer_plan(c, o), o);
    expect(false, "too-large config: not refused");
  } catch (const cuda_error& e) {  // the device's limit, not the input's fault: exit code 5
    const std::string what = e.what();
    expect(what.find("bytes of device memory") != std::string::npos, "too-large config: message " + what);
    std::printf("too-large config refused: %s\n", what.c_str());
  }
}

// One untimed pass of `config` through each expert path, straight through
// LayerRunner; the output must be finite (it starts as NaN).
void sanitize_pass(const char* name, const ModelConfig& config, const BenchOptions& o) {
  try {
    const LayerPlan plan = make_layer_plan(config, o);
    std::vector<LayerWeights> weights;
    for (std::int64_t l = 0; l < config.num_layers; ++l) weights.push_back(make_layer_weights(plan, l, o.seed));
    kernels::BlasContext blas(2);
    kernels::LayerRunner runner(plan, weights, o.balanced, blas);
    const std::vector<float> input = make_input(plan, o.seed);
    const DeviceBuffer x = to_device(input), xb = to_device(kernels::to_bf16_bits(input.data(), input.size()));
    for (const kernels::ExpertPath path : {kernels::ExpertPath::streams, kernels::ExpertPath::grouped}) {
      const std::size_t n = input.size();
      kernels::fill(runner.output(), n, std::nanf(""));
      kernels::FlopTally tally;
      try {
        runner.forward(plan, x.as<float>(), xb.as<kernels::bf16>(), kernels::RoutingMode::sync, path, tally);
        SMELT_CUDA_CALL(cudaStreamSynchronize(blas.stream()));
      } catch (const cuda_error& e) {
        if (path != kernels::ExpertPath::grouped) throw;
        std::printf("sanitize %-12s grouped path refused by this cuBLAS: %s\n", name, e.what());
        SMELT_CUDA_CALL(cudaStreamSynchronize(blas.stream()));
        continue;
      }
      std::vector<float> out(n);
      SMELT_CUDA_CALL(cudaMemcpy(out.data(), runner.output(), n * sizeof(float), cudaMemcpyDeviceToHost));
      const bool finite = std::all_of(out.begin(), out.end(), [](float v) { return std::isfinite(v); });
      expect(finite, std::string(name) + ": non-finite output after one pass");
      std::printf("sanitize %-12s %s path: %s\n", name, describe(path, blas.sides()).c_str(), finite ? "ok" : "FAILED");
    }
  } catch (const std::exception& e) {
    expect(false, std::string(name) + ": threw " + e.what());
  }
}

}  // namespace

int main(int argc, char** argv) {
  const bool sanitize = argc > 1 && std::string(argv[1]) == "--sanitize";
  const kernels::DeviceInfo info = kernels::query_device();
  if (!info.available) {
    std::printf("skipped: %s\n", info.reason.c_str());
    return 77;
  }
  std::printf("device: %s (sm_%d%d)\n", info.name.c_str(), info.compute_major, info.compute_minor);
  kernels::CudaBackend backend;
  if (const auto why = backend.unavailable()) {
    std::printf("FAILED: the backend is unavailable on this device: %s\n", why->c_str());
    return 1;
  }
  try {
    routing_tests();
  } catch (const std::exception& e) {
    expect(false, std::string("routing kernels threw ") + e.what());
  }
  BenchOptions o;
  o.tokens = 512;
  o.context = 256;
  if (sanitize) {
    sanitize_pass("moe", bench_moe(), o);
    sanitize_pass("dense", bench_dense(), o);
    sanitize_pass("variety", bench_variety(), o);
    std::printf("%s\n", failures == 0 ? "all passed" : "FAILED");
    return failures == 0 ? 0 : 1;
  }
  run_case(backend, "moe", bench_moe(), o);
  run_case(backend, "dense", bench_dense(), o);
  run_case(backend, "variety", bench_variety(), o);
  BenchOptions balanced = o;
  balanced.moe_only = balanced.balanced = true;
  run_case(backend, "moe-only balanced", bench_moe(), balanced);
  refuses_too_large(backend);
  std::printf("%s\n", failures == 0 ? "all passed" : "FAILED");
  return failures == 0 ? 0 : 1;
}
