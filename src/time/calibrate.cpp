// calibrate_cpu(): the CPU backend measured as the time model reads it
// (docs/time.md, "Calibration"). One thread, as the CPU backend runs.
#include "smelt/bench_calibrate.hpp"

#include <algorithm>
#include <chrono>
#include <fstream>
#include <string>
#include <vector>

#include <unistd.h>

#include <fmt/format.h>

#include "cpu/attention.hpp"
#include "cpu/blas.hpp"
#include "cpu/cpu_name.hpp"
#include "cpu/pointwise.hpp"
#include "util/median.hpp"
#include "util/option_bounds.hpp"

namespace smelt {
namespace {

using Clock = std::chrono::steady_clock;
using i64 = std::int64_t;

double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

// The median time of `run` over `repetitions` timed batches, each repeating it until 10 ms have passed, per call.
template <class Run>
double time_of(Run run, i64 repetitions) {
  run();  // warm-up: pages touched, kernels chosen
  std::vector<double> per_call;
  for (i64 r = 0; r < repetitions; ++r) {
    i64 calls = 0;
    const Clock::time_point start = Clock::now();
    double elapsed = 0;
    do {
      run();
      ++calls;
      elapsed = seconds_since(start);
    } while (elapsed < 0.01);
    per_call.push_back(elapsed / static_cast<double>(calls));
  }
  return detail::median(per_call);
}

// Operand copies a GEMM of one shape rotates through: enough that one pass over them (64 MiB) leaves the caches,
// as a training step's GEMMs read weights and activations that other ops have since pushed out; at most 8.
constexpr double kColdBytes = 64.0 * (1 << 20);
constexpr i64 kMaxCopies = 8;

// The time of one GEMM of (m, n, k) as a training step runs it: the mean of the forward's layout (A B), the input
// gradient's (A B^T) and the weight gradient's (A^T B), each with cold operands.
double step_gemm_seconds(i64 m, i64 n, i64 k, i64 repetitions) {
  const auto sz = [](i64 v) { return static_cast<std::size_t>(v); };
  const double bytes = 4.0 * static_cast<double>(m * k + k * n);
  const i64 copies = std::clamp<i64>(static_cast<i64>(kColdBytes / bytes), 1, kMaxCopies);
  std::vector<std::vector<float>> a(sz(copies), std::vector<float>(sz(m * k), 0.5f));
  std::vector<std::vector<float>> b(sz(copies), std::vector<float>(sz(k * n), 0.25f));
  std::vector<float> out(sz(m * n));
  double total = 0;
  for (const auto& layout : {std::pair{false, false}, std::pair{false, true}, std::pair{true, false}}) {
    const bool ta = layout.first, tb = layout.second;  // named apart: clang 14 captures no structured binding
    std::size_t next = 0;
    total += time_of(
        [&] {
          detail::gemm(ta, tb, m, n, k, a[next].data(), b[next].data(), 0.0f, out.data());
          next = (next + 1) % a.size();
        },
        repetitions);
  }
  return total / 3;
}

// The step's own attention core (cpu::TiledAttention: tiles of 64 queries by BLAS, masked softmax),
// forward and backward (the median of `repetitions` runs after one untimed), on one causal sequence of `context`
// tokens and 8 heads of 64: its rate per counted FLOP (count()'s exact causal pairs, 4 d a pair and head, 3 x that
// for forward and backward) over the peak.
double attention_efficiency(i64 context, i64 repetitions, double peak) {
  AttentionConfig a;
  a.num_heads = a.num_kv_heads = 8;
  a.head_dim = 64;
  const auto size = static_cast<std::size_t>(context * a.num_heads * a.head_dim);
  std::vector<float> q(size), k(size), v(size), o(size), dq(size), dk(size), dv(size);
  std::vector<float> lse(static_cast<std::size_t>(context * a.num_heads));
  for (std::size_t i = 0; i < size; ++i)  // spread values in [-1, 1): the softmax sees scores of either sign
    q[i] = static_cast<float>((i * 7919) % 2000) / 1000.0f - 1.0f, k[i] = q[(i * 31) % size], v[i] = q[(i * 17) % size];
  cpu::TiledAttention<float> attention(a, 1, context);
  std::vector<double> times;
  for (i64 r = 0; r <= repetitions; ++r) {
    const Clock::time_point start = Clock::now();
    attention.forward(LayerAttention::full, q.data(), k.data(), v.data(), o.data(), lse.data());
    attention.backward(LayerAttention::full, q.data(), k.data(), v.data(), o.data(), lse.data(), o.data(), dq.data(),
                       dk.data(), dv.data());
    if (r > 0) times.push_back(seconds_since(start));
  }
  const double counted =
      3.0 * 4.0 * static_cast<double>(a.num_heads * a.head_dim) * static_cast<double>(context * (context + 1) / 2);
  return std::min(1.0, counted / detail::median(times) / peak);
}

// The backend's elementwise rate in the bytes the time model counts: the step's own AdamW update over 8 Mi
// parameters (4 arrays of 32 MiB, past the caches), 28 bytes a parameter over its time. An elementwise op of the
// step is bound by the memory it streams and by the arithmetic done per byte; AdamW, the largest of them, stands
// for both (a plain add would rate the memory alone).
double elementwise_bandwidth(std::size_t elements, i64 repetitions) {
  std::vector<float> p(elements, 0.5f), m(elements, 0.0f), v(elements, 0.0f), g(elements, 0.01f);
  i64 step = 0;
  const double s =
      time_of([&] { cpu::adamw_update(p.data(), m.data(), v.data(), g.data(), static_cast<i64>(elements), ++step); },
              repetitions);
  return 28.0 * static_cast<double>(elements) / s;
}

}  // namespace

Calibration calibrate_cpu(const CalibrateOptions& o) {
  {
    detail::Violations errors;
    detail::check_integer(o, "repetitions", errors);
    errors.throw_if_any();
  }
  const detail::SingleThreadedBlas one_thread;
  Calibration c;
  c.backend = "cpu";
  c.dtype = Dtype::fp32;
  c.threads = 1;
  c.device = fmt::format("{}, 1 thread, {} sgemm", cpu::cpu_name(), detail::blas_name());
  GemmTable& t = c.gemm;
  if (o.quick) {
    t.m = {8, 64}, t.n = {32, 128}, t.k = {32, 128};
  } else {
    t.m = {1, 4, 16, 32, 64, 128, 256, 512, 1024, 2048}, t.n = {64, 256, 1024, 2048}, t.k = {64, 256, 1024, 2048};
  }
  // The bandwidth is sampled between the GEMM shapes, 8 times in all, and the median kept: one sample rates the
  // machine at one moment, and a shared machine's memory traffic comes and goes.
  const std::size_t elements = (o.quick ? 1U : 8U) << 20;
  const std::size_t shapes = t.m.size() * t.n.size() * t.k.size(), every = std::max<std::size_t>(1, shapes / 8);
  std::vector<double> bandwidth;
  for (const i64 m : t.m)
    for (const i64 n : t.n)
      for (const i64 k : t.k) {
        if (t.flops_per_second.size() % every == 0) bandwidth.push_back(elementwise_bandwidth(elements, 1));
        t.flops_per_second.push_back(2.0 * static_cast<double>(m * n * k) / step_gemm_seconds(m, n, k, o.repetitions));
      }
  c.memory_bandwidth = detail::median(bandwidth);
  const float one = 1.0f;
  float product = 0;
  c.op_overhead = time_of([&] { detail::gemm(1, 1, 1, &one, &one, &product); }, o.repetitions);

  const double peak = *std::max_element(t.flops_per_second.begin(), t.flops_per_second.end());
  HardwareSpec& h = c.hardware;
  h.name = "cpu";
  h.description = c.device;
  h.backend = "cpu";
  h.peak_flops_bf16 = h.peak_flops_fp16 = h.peak_flops_fp32 = peak;
  h.memory_bandwidth = c.memory_bandwidth;
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
  h.memory_bytes = pages > 0 && page > 0 ? static_cast<i64>(pages) * page : i64{1} << 30;
  // One device: its "links" are its own memory.
  h.link_bandwidth = h.network_bandwidth = c.memory_bandwidth;
  h.link_latency = h.network_latency = 1e-6;
  h.devices_per_node = 1;
  h.op_overhead = c.op_overhead;
  // The table sets every GEMM's rate; the attention core's is measured as the step runs it, at 1024 tokens (128
  // quick).
  h.gemm_efficiency = 1;
  h.gemm_half_size = 0;
  h.attention_efficiency = attention_efficiency(o.quick ? 128 : 1024, o.repetitions, peak);
  h.memory_efficiency = 1;
  h.calibrated = true;
  c.has_hardware = true;
  h.sources = {
      fmt::format("measured by smelt::calibrate_cpu: {} GEMM shapes, each the mean time of its three "
                  "training layouts (A B, A B^T, A^T B) on cold operands, median of {} runs each",
                  t.flops_per_second.size(), o.repetitions),
      "peak: the best GEMM rate of the grid; memory bandwidth: the step's AdamW update over 8 Mi parameters, 28 "
      "bytes each, the median of 8 samples spread over the calibration",
      "op_overhead: a 1 x 1 x 1 GEMM call; attention: the step's attention core, forward and backward, at 1024 "
      "tokens and 8 heads of 64, per counted FLOP"};
  return c;
}

}  // namespace smelt
