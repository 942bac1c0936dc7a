// The benchmark's own CUDA kernels (kernels/moe_kernels.cuh,
// kernels/attention_kernels.cuh), compiled as host C++ and run through the CPU
// emulation of tests/kernels/emulated/cuda_emulation.hpp, against straightforward host
// computations. Several blocks and warps per launch, so that grid-stride
// loops, warp shuffles and block barriers all take part.
#include "cuda_emulation.hpp"  // first: it redefines __shared__ for the kernels

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numeric>
#include <random>
#include <set>
#include <utility>
#include <vector>

#include "device/attention_kernels.cuh"
#include "device/moe_kernels.cuh"

namespace {

namespace dev = smelt::kernels::device;
using smelt::kernels::bf16;
using smelt::kernels::Mask;
using smelt_emulation::launch;
using i64 = std::int64_t;

std::vector<float> normal_floats(std::size_t n, unsigned seed) {
  std::mt19937 gen(seed);
  std::normal_distribution<float> dist(0.f, 1.f);
  std::vector<float> v(n);
  for (float& x : v) x = dist(gen);
  return v;
}

std::vector<bf16> to_bf16(const std::vector<float>& v) {
  std::vector<bf16> out(v.size());
  for (std::size_t i = 0; i < v.size(); ++i) out[i] = __float2bfloat16_rn(v[i]);
  return out;
}

float f(bf16 v) { return __bfloat162float(v); }

// What router_topk must produce: the top_k experts by logit (both scores are
// increasing in the logit), the lower index first on ties; or, balanced,
// experts (t k + j) mod E; weights = the chosen scores over their sum.
struct HostRouting {
  std::vector<int> idx;
  std::vector<float> w;
  std::vector<int> counts;
};

HostRouting host_routing(const std::vector<float>& logits, int tokens, int experts, int k, bool sigmoid,
                         bool balanced) {
  HostRouting r;
  r.counts.assign(static_cast<std::size_t>(experts), 0);
  for (int t = 0; t < tokens; ++t) {
    const float* row = logits.data() + static_cast<std::size_t>(t) * static_cast<std::size_t>(experts);
    const float top = *std::max_element(row, row + experts);
    double sum = 0;
    for (int e = 0; e < experts; ++e) sum += std::exp(static_cast<double>(row[e]) - top);
    const auto score = [&](int e) {
      return sigmoid ? 1.0 / (1.0 + std::exp(-static_cast<double>(row[e])))
                     : std::exp(static_cast<double>(row[e]) - top) / sum;
    };
    std::vector<int> order(static_cast<std::size_t>(experts));
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return row[a] > row[b]; });
    double chosen = 0;
    std::vector<double> s;
    for (int j = 0; j < k; ++j) {
      const int e = balanced ? (t * k + j) % experts : order[static_cast<std::size_t>(j)];
      r.idx.push_back(e);
      s.push_back(score(e));
      chosen += s.back();
      ++r.counts[static_cast<std::size_t>(e)];
    }
    for (const double v : s) r.w.push_back(static_cast<float>(v / chosen));
  }
  return r;
}

void check_router(const std::vector<float>& logits, int tokens, int experts, int k, bool sigmoid, bool balanced) {
  const std::size_t pairs = static_cast<std::size_t>(tokens) * static_cast<std::size_t>(k);
  std::vector<int> idx(pairs, -1), counts(static_cast<std::size_t>(experts), 0);
  std::vector<float> w(pairs, std::nanf(""));
  // 3 blocks of 8 warps: 24 warps, each taking every 24th token.
  launch(3, dev::kThreads, static_cast<std::size_t>(experts) * sizeof(int), dev::router_topk_kernel, logits.data(),
         static_cast<std::int64_t>(tokens), experts, k, sigmoid, balanced, idx.data(), w.data(), counts.data());
  const HostRouting want = host_routing(logits, tokens, experts, k, sigmoid, balanced);
  CHECK(idx == want.idx);
  CHECK(counts == want.counts);
  for (std::size_t i = 0; i < pairs; ++i) CHECK(w[i] == Approx(want.w[i]).epsilon(1e-5));
}

}  // namespace

TEST_CASE("emulated kernels: router top-k and its histogram", "[kernels_emulated]") {
  // Token counts of two or three per warp (24 warps): every warp loops, some once more.
  SECTION("softmax, 16 experts, top-4") { check_router(normal_floats(56 * 16, 1), 56, 16, 4, false, false); }
  SECTION("sigmoid, 160 experts (5 per lane), top-8") {
    check_router(normal_floats(30 * 160, 2), 30, 160, 8, true, false);
  }
  SECTION("balanced: (t k + j) mod E") { check_router(normal_floats(50 * 12, 3), 50, 12, 5, false, true); }
  SECTION("2048 experts: all 64 bits of a lane's taken mask") {
    check_router(normal_floats(4 * 2048, 4), 4, 2048, 6, false, false);
  }
  SECTION("all logits equal: the lowest indices, equal weights") {
    const std::vector<float> logits(30 * 40, 0.25f);
    check_router(logits, 30, 40, 3, false, false);
    std::vector<int> idx(90), counts(40, 0);
    std::vector<float> w(90);
    launch(1, dev::kThreads, 40 * sizeof(int), dev::router_topk_kernel, logits.data(), std::int64_t{30}, 40, 3, false,
           false, idx.data(), w.data(), counts.data());
    CHECK(std::vector<int>(idx.begin(), idx.begin() + 3) == std::vector<int>{0, 1, 2});
    CHECK(w[0] == Approx(1.0 / 3));
    CHECK(counts[0] == 30);
    CHECK(counts[3] == 0);
  }
}

TEST_CASE("emulated kernels: expert offsets are the exclusive prefix sum, across tiles", "[kernels_emulated]") {
  // One partial tile, one full tile, several tiles with carries and a partial
  // last one, at 64 threads (any whole number of warps works); and the
  // launch's own 1024 threads once, over three tiles. (Each emulated thread is
  // a thread of the test, under ThreadSanitizer too: 1024 of them cost seconds.)
  const std::pair<unsigned, int> cases[] = {
      {64u, 5}, {64u, 64}, {64u, 200}, {static_cast<unsigned>(dev::kScanThreads), 3000}};
  for (const auto& [threads, experts] : cases) {
    std::mt19937 gen(static_cast<unsigned>(experts));
    std::uniform_int_distribution<int> dist(0, 9);
    std::vector<int> counts(static_cast<std::size_t>(experts));
    for (int& c : counts) c = dist(gen);
    std::vector<int> offsets(counts.size() + 1, -1), cursor(counts.size() + 1, -1);
    launch(1, threads, 0, dev::offsets_kernel, counts.data(), experts, offsets.data(), cursor.data());
    std::vector<int> want(counts.size() + 1, 0);
    std::partial_sum(counts.begin(), counts.end(), want.begin() + 1);
    CHECK(offsets == want);
    CHECK(std::equal(cursor.begin(), cursor.end() - 1, want.begin()));
  }
}

TEST_CASE("emulated kernels: permutation groups rows by expert", "[kernels_emulated]") {
  for (const i64 hidden : {24, 13}) {  // 16-byte row copies, and element by element
    const int tokens = 37, k = 3, experts = 7;
    std::mt19937 gen(5);
    std::uniform_int_distribution<int> pick(0, experts - 1);
    std::vector<int> idx(static_cast<std::size_t>(tokens * k));
    for (int& e : idx) e = pick(gen);
    std::vector<int> counts(experts, 0), cursor(experts + 1, 0);
    for (const int e : idx) ++counts[static_cast<std::size_t>(e)];
    std::partial_sum(counts.begin(), counts.end(), cursor.begin() + 1);
    const std::vector<int> start = cursor;
    const std::vector<bf16> x = to_bf16(normal_floats(static_cast<std::size_t>(tokens * hidden), 6));
    std::vector<bf16> xp(idx.size() * static_cast<std::size_t>(hidden), __float2bfloat16_rn(NAN));
    std::vector<int> slot(idx.size(), -1);
    auto copy = hidden % 8 == 0 ? dev::permute_kernel<8> : dev::permute_kernel<1>;
    launch(2, dev::kThreads, 0, copy, x.data(), static_cast<i64>(idx.size()), hidden, k, idx.data(), cursor.data(),
           slot.data(), xp.data());
    std::set<int> seen;
    for (std::size_t p = 0; p < idx.size(); ++p) {
      const int e = idx[p], s = slot[p];
      CHECK(s >= start[static_cast<std::size_t>(e)]);  // inside its expert's rows
      CHECK(s < start[static_cast<std::size_t>(e) + 1]);
      seen.insert(s);
      for (i64 c = 0; c < hidden; ++c)
        CHECK(f(xp[static_cast<std::size_t>(s * hidden + c)]) ==
              f(x[static_cast<std::size_t>(static_cast<i64>(p / k) * hidden + c)]));
    }
    CHECK(seen.size() == idx.size());  // every row claimed once
    for (int e = 0; e < experts; ++e)
      CHECK(cursor[static_cast<std::size_t>(e)] == start[static_cast<std::size_t>(e) + 1]);
  }
}

TEST_CASE("emulated kernels: SwiGLU and gelu_tanh activations", "[kernels_emulated]") {
  for (const bool gated : {true, false})
    for (const i64 width : {16, 5}) {
      const i64 rows = 10, in_width = gated ? 2 * width : width;
      const std::vector<bf16> in = to_bf16(normal_floats(static_cast<std::size_t>(rows * in_width), 7));
      std::vector<bf16> out(static_cast<std::size_t>(rows * width), __float2bfloat16_rn(NAN));
      auto kernel = width % 8 == 0 ? dev::activation_kernel<8> : dev::activation_kernel<1>;
      launch(2, dev::kThreads, 0, kernel, in.data(), rows, width, gated, out.data());
      for (i64 r = 0; r < rows; ++r)
        for (i64 c = 0; c < width; ++c) {
          const double a = f(in[static_cast<std::size_t>(r * in_width + c)]);
          double want = 0;
          if (gated) {  // silu(gate) * up, [gate | up] per row
            want = a / (1 + std::exp(-a)) * f(in[static_cast<std::size_t>(r * in_width + width + c)]);
          } else {  // 0.5 a (1 + tanh(sqrt(2/pi) (a + 0.044715 a^3)))
            want = 0.5 * a * (1 + std::tanh(0.7978845608028654 * (a + 0.044715 * a * a * a)));
          }
          CHECK(f(out[static_cast<std::size_t>(r * width + c)]) == Approx(want).epsilon(8e-3).margin(1e-6));
        }
    }
}

TEST_CASE("emulated kernels: weighted combine with shared experts and the residual", "[kernels_emulated]") {
  for (const i64 hidden : {8, 7}) {  // 16-byte fp32 accesses, and element by element
    for (const bool gate : {true, false}) {
      const i64 tokens = 6;
      const int k = 3;
      const std::size_t pairs = static_cast<std::size_t>(tokens) * k;
      std::vector<int> slot(pairs);
      std::iota(slot.begin(), slot.end(), 0);
      std::shuffle(slot.begin(), slot.end(), std::mt19937(8));  // where each (token, j) row landed
      const std::vector<bf16> z = to_bf16(normal_floats(pairs * static_cast<std::size_t>(hidden), 9));
      const std::vector<float> w = normal_floats(pairs, 10),
                               shared = normal_floats(static_cast<std::size_t>(tokens * hidden), 11);
      const std::vector<float> logit = normal_floats(static_cast<std::size_t>(tokens), 12);
      const std::vector<float> x0 = normal_floats(static_cast<std::size_t>(tokens * hidden), 13);
      std::vector<float> x = x0;  // in place, as the layer runs it
      std::vector<bf16> xb(x.size(), __float2bfloat16_rn(NAN));
      auto kernel = hidden % 4 == 0 ? dev::combine_kernel<4> : dev::combine_kernel<1>;
      launch(2, dev::kThreads, 0, kernel, x.data(), z.data(), slot.data(), w.data(), k, shared.data(),
             gate ? logit.data() : static_cast<const float*>(nullptr), tokens, hidden, 0.5f, x.data(), xb.data());
      for (i64 t = 0; t < tokens; ++t) {
        const double g = gate ? 1 / (1 + std::exp(-static_cast<double>(logit[static_cast<std::size_t>(t)]))) : 1.0;
        for (i64 c = 0; c < hidden; ++c) {
          double acc = g * shared[static_cast<std::size_t>(t * hidden + c)];
          for (int j = 0; j < k; ++j) {
            const std::size_t p = static_cast<std::size_t>(t * k + j);
            acc += w[p] * f(z[static_cast<std::size_t>(slot[p]) * static_cast<std::size_t>(hidden) +
                              static_cast<std::size_t>(c)]);
          }
          const std::size_t i = static_cast<std::size_t>(t * hidden + c);
          const double want = x0[i] + 0.5 * acc;
          CHECK(x[i] == Approx(want).epsilon(1e-5).margin(1e-5));
          CHECK(f(xb[i]) == Approx(want).epsilon(8e-3).margin(1e-5));
        }
      }
    }
  }
}

TEST_CASE("emulated kernels: residual add and its bf16 copy", "[kernels_emulated]") {
  for (const i64 count : {40, 41}) {
    const std::vector<float> x0 = normal_floats(static_cast<std::size_t>(count), 14),
                             d = normal_floats(static_cast<std::size_t>(count), 15);
    std::vector<float> x = x0;
    std::vector<bf16> xb(x.size(), __float2bfloat16_rn(NAN));
    auto kernel = count % 4 == 0 ? dev::residual_kernel<4> : dev::residual_kernel<1>;
    launch(1, 32, 0, kernel, x.data(), d.data(), count, 0.5f, x.data(), xb.data());  // 32 threads: grid stride
    for (std::size_t i = 0; i < x.size(); ++i) {
      CHECK(x[i] == Approx(x0[i] + 0.5 * d[i]).margin(1e-6));
      CHECK(f(xb[i]) == f(__float2bfloat16_rn(x[i])));
    }
  }
}

TEST_CASE("emulated kernels: masked softmax over causal, sliding and chunked rows", "[kernels_emulated]") {
  for (const i64 context : {10, 9})  // bf16 pairs, and single elements
    for (const Mask mask : {Mask::causal, Mask::sliding, Mask::chunked}) {
      const i64 seqs = 2, rows = seqs * context, window = 3, chunk = 4;
      const std::vector<float> scores = normal_floats(static_cast<std::size_t>(rows * context), 16);
      std::vector<bf16> probs(scores.size(), __float2bfloat16_rn(NAN));
      // 3 blocks, each taking every 3rd row, of 2 warps: the kernel strides by
      // blockDim and reduces over blockDim / 32 warps, so 64 threads run every
      // step of its 256 (at a quarter of the emulated threads).
      launch(3, 64, 0, dev::masked_softmax_kernel, scores.data(), rows, context, static_cast<int>(mask), window, chunk,
             probs.data());
      for (i64 r = 0; r < rows; ++r) {
        const i64 p = r % context;
        const i64 lo = mask == Mask::sliding   ? std::max<i64>(0, p - window + 1)
                       : mask == Mask::chunked ? p / chunk * chunk
                                               : 0;
        double top = -INFINITY, sum = 0;
        for (i64 j = lo; j <= p; ++j) top = std::max<double>(top, scores[static_cast<std::size_t>(r * context + j)]);
        for (i64 j = lo; j <= p; ++j) sum += std::exp(scores[static_cast<std::size_t>(r * context + j)] - top);
        for (i64 j = 0; j < context; ++j) {
          const float got = f(probs[static_cast<std::size_t>(r * context + j)]);
          if (j < lo || j > p) {
            CHECK(got == 0.f);
          } else {
            CHECK(got == Approx(std::exp(scores[static_cast<std::size_t>(r * context + j)] - top) / sum).epsilon(8e-3));
          }
        }
      }
    }
}

TEST_CASE("emulated kernels: the random bf16 fill is deterministic and in [-1, 1]", "[kernels_emulated]") {
  std::vector<bf16> a(1000), b(1000), c(1000);
  launch(2, dev::kThreads, 0, dev::random_bf16_kernel, a.data(), a.size(), std::uint64_t{1});
  launch(3, 64, 0, dev::random_bf16_kernel, b.data(), b.size(), std::uint64_t{1});  // another grid, same values
  launch(2, dev::kThreads, 0, dev::random_bf16_kernel, c.data(), c.size(), std::uint64_t{2});
  double mean = 0;
  int same = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    CHECK(f(a[i]) == f(b[i]));
    CHECK(std::fabs(f(a[i])) <= 1.f);
    mean += f(a[i]) / 1000.0;
    same += f(a[i]) == f(c[i]);
  }
  CHECK(std::fabs(mean) < 0.1);  // uniform on [-1, 1]: standard error of the mean 0.018
  CHECK(same < 50);              // another seed, other values
}
