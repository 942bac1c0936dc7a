// The CUDA backend's cuBLAS calls, checked on the CPU: every description in
// kernels/gemm_shapes.hpp is run through a column-major reference GEMM with
// cuBLAS's semantics (and its leading-dimension rules) and compared with the
// row-major product it stands for, written out naively here.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "device/gemm_shapes.hpp"

namespace {

using smelt::kernels::AttentionShape;
using smelt::kernels::BlasGemm;
using smelt::kernels::ExpertGroups;
using smelt::kernels::ExpertPhase;
using smelt::kernels::ExpertShape;
using i64 = std::int64_t;
using Buffer = std::vector<double>;

Buffer random_buffer(i64 n, unsigned seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<double> dist(-1, 1);
  Buffer b(static_cast<std::size_t>(n));
  for (double& v : b) v = dist(gen);
  return b;
}

Buffer poisoned(i64 n) { return Buffer(static_cast<std::size_t>(n), std::numeric_limits<double>::quiet_NaN()); }

double& at(Buffer& b, i64 i) {
  REQUIRE(i >= 0);
  REQUIRE(i < static_cast<i64>(b.size()));
  return b[static_cast<std::size_t>(i)];
}
double at(const Buffer& b, i64 i) {
  REQUIRE(i >= 0);
  REQUIRE(i < static_cast<i64>(b.size()));
  return b[static_cast<std::size_t>(i)];
}

// C = alpha op(A) op(B) + beta C as cuBLAS defines it (column-major, batched
// with strides), refusing what cuBLAS refuses: lda < rows of A as stored, etc.
// Every element access is bounds-checked against the buffers.
void blas_reference(const BlasGemm& g, const Buffer& A, const Buffer& B, Buffer& C, double alpha = 1, double beta = 0) {
  REQUIRE(g.m > 0);
  REQUIRE(g.n > 0);
  REQUIRE(g.k > 0);
  REQUIRE(g.lda >= (g.trans_a ? g.k : g.m));
  REQUIRE(g.ldb >= (g.trans_b ? g.n : g.k));
  REQUIRE(g.ldc >= g.m);
  for (i64 b = 0; b < g.batch; ++b) {
    const i64 a0 = g.offset_a + b * g.stride_a, b0 = g.offset_b + b * g.stride_b, c0 = g.offset_c + b * g.stride_c;
    for (i64 j = 0; j < g.n; ++j)
      for (i64 i = 0; i < g.m; ++i) {
        double sum = 0;
        for (i64 l = 0; l < g.k; ++l) {
          const double a = at(A, a0 + (g.trans_a ? l + i * g.lda : i + l * g.lda));
          const double bv = at(B, b0 + (g.trans_b ? j + l * g.ldb : l + j * g.ldb));
          sum += a * bv;
        }
        double& c = at(C, c0 + i + j * g.ldc);
        c = alpha * sum + (beta == 0 ? 0 : beta * c);
      }
  }
}

}  // namespace

TEST_CASE("gemm shapes: row-major product with padded row strides", "[gemm_shapes]") {
  // C [3 x 5] = A [3 x 4] B [4 x 5], rows padded to 6, 7 and 9 elements.
  const i64 M = 3, N = 5, K = 4, lda = 6, ldb = 7, ldc = 9;
  const Buffer A = random_buffer(M * lda, 1), B = random_buffer(K * ldb, 2);
  Buffer C = random_buffer(M * ldc, 3);
  const Buffer C0 = C;
  const BlasGemm g = smelt::kernels::row_major_gemm(M, N, K, lda, ldb, ldc);
  CHECK(g.flops() == 2 * 3 * 5 * 4);  // 120
  // cuBLAS's A is the row-major B, its B the row-major A.
  blas_reference(g, B, A, C, 0.5, 2.0);
  for (i64 r = 0; r < M; ++r)
    for (i64 c = 0; c < ldc; ++c) {
      double want = at(C0, r * ldc + c);  // padding untouched
      if (c < N) {
        double dot = 0;
        for (i64 l = 0; l < K; ++l) dot += at(A, r * lda + l) * at(B, l * ldb + c);
        want = 0.5 * dot + 2.0 * want;
      }
      CHECK(at(C, r * ldc + c) == Approx(want).margin(1e-12));
    }
}

TEST_CASE("gemm shapes: a one-column product (the shared-expert gate)", "[gemm_shapes]") {
  // gate [6 x 1] = x [6 x 4] w [4 x 1]: cuBLAS m = 1 with lda = ldc = 1 is legal.
  const Buffer x = random_buffer(6 * 4, 4), w = random_buffer(4, 5);
  Buffer out = poisoned(6);
  blas_reference(smelt::kernels::row_major_gemm(6, 1, 4, 4, 1, 1), w, x, out);
  for (i64 t = 0; t < 6; ++t) {
    double dot = 0;
    for (i64 l = 0; l < 4; ++l) dot += at(x, t * 4 + l) * at(w, l);
    CHECK(at(out, t) == Approx(dot).margin(1e-12));
  }
}

TEST_CASE("gemm shapes: attention scores and values per head, GQA, several sequences", "[gemm_shapes]") {
  // 2 sequences of 5 tokens; 4 query heads sharing 2 KV heads (heads 0, 1 read
  // KV head 0; heads 2, 3 read KV head 1); head_dim 3. qkv rows: q (12) | k (6) | v (6).
  const AttentionShape s{5, 2, 4, 2, 3};
  const i64 tokens = s.context * s.sequences, ld = 24;
  REQUIRE(s.qkv() == ld);
  const Buffer qkv = random_buffer(tokens * ld, 6);
  const Buffer probs = random_buffer(s.sequences * s.context * s.context, 7);
  Buffer attn = poisoned(tokens * s.q());
  const std::int64_t kv_head[] = {0, 0, 1, 1};
  for (i64 head = 0; head < s.heads; ++head) {
    const i64 g = kv_head[head];
    Buffer scores = poisoned(s.sequences * s.context * s.context);
    const BlasGemm qk = smelt::kernels::attention_scores_gemm(s, head);
    CHECK(qk.flops() == 2 * 5 * 5 * 3 * 2);  // 2 c c d per sequence: 300
    blas_reference(qk, qkv, qkv, scores);
    const BlasGemm pv = smelt::kernels::attention_values_gemm(s, head);
    CHECK(pv.flops() == 2 * 5 * 3 * 5 * 2);  // 2 c d c per sequence: 300
    blas_reference(pv, qkv, probs, attn);
    for (i64 seq = 0; seq < s.sequences; ++seq)
      for (i64 p = 0; p < s.context; ++p) {
        const i64 row = seq * s.context + p;
        for (i64 j = 0; j < s.context; ++j) {  // S[p][j] = q_head(p) . k_g(j)
          double dot = 0;
          for (i64 d = 0; d < s.head_dim; ++d)
            dot += at(qkv, row * ld + head * 3 + d) * at(qkv, (seq * s.context + j) * ld + 12 + g * 3 + d);
          CHECK(at(scores, (seq * s.context + p) * s.context + j) == Approx(dot).margin(1e-12));
        }
        for (i64 d = 0; d < s.head_dim; ++d) {  // O[p][d] = sum_j P[p][j] v_g(j)[d]
          double sum = 0;
          for (i64 j = 0; j < s.context; ++j)
            sum += at(probs, (seq * s.context + p) * s.context + j) *
                   at(qkv, (seq * s.context + j) * ld + 12 + 6 + g * 3 + d);
          CHECK(at(attn, row * s.q() + head * 3 + d) == Approx(sum).margin(1e-12));
        }
      }
  }
  for (const double v : attn) CHECK_FALSE(std::isnan(v));  // every head wrote its own columns, all of them
}

TEST_CASE("gemm shapes: expert groups from routed counts", "[gemm_shapes]") {
  // Counts per expert 3, 0, 2, 3, 1: row offsets 0, 3, 3, 5, 8 (exclusive prefix sum).
  const ExpertGroups g = smelt::kernels::group_experts({3, 0, 2, 3, 1});
  REQUIRE(g.problems.size() == 4);  // expert 1 has no rows
  // By row count, expert index breaking ties: e4 (1 row), e2 (2), e0 (3), e3 (3).
  const i64 expert[] = {4, 2, 0, 3}, rows[] = {1, 2, 3, 3}, offset[] = {8, 3, 0, 5};
  for (std::size_t i = 0; i < 4; ++i) {
    CHECK(g.problems[i].expert == expert[i]);
    CHECK(g.problems[i].rows == rows[i]);
    CHECK(g.problems[i].offset == offset[i]);
  }
  CHECK(g.group_rows == std::vector<int>{1, 2, 3});
  CHECK(g.group_size == std::vector<int>{1, 1, 2});
  CHECK(smelt::kernels::group_experts({0, 0}).problems.empty());
}

TEST_CASE("gemm shapes: expert products over the permuted rows", "[gemm_shapes]") {
  const std::vector<int> counts{3, 0, 2, 3, 1};
  const i64 rows = 9, E = 5;
  for (const bool gated : {true, false}) {
    const ExpertShape s{4, 3, gated};  // H 4, F 3; U = 6 gated, 3 plain
    const i64 H = 4, F = 3, U = gated ? 6 : 3;
    const Buffer w_up = random_buffer(E * H * U, 8), w_down = random_buffer(E * F * H, 9);
    const Buffer xp = random_buffer(rows * H, 10), act = random_buffer(rows * F, 11);
    Buffer up = poisoned(rows * U), z = poisoned(rows * H);
    const ExpertGroups groups = smelt::kernels::group_experts(counts);
    i64 flops = 0;
    for (const ExpertGroups::Problem& p : groups.problems) {
      const BlasGemm gu = smelt::kernels::expert_gemm(s, ExpertPhase::up, p.expert, p.rows, p.offset);
      const BlasGemm gd = smelt::kernels::expert_gemm(s, ExpertPhase::down, p.expert, p.rows, p.offset);
      // What the grouped call assumes for every problem of a phase: lda = m, ldb = k, ldc = m, n = rows.
      CHECK((gu.m == U && gu.k == H && gu.lda == U && gu.ldb == H && gu.ldc == U && gu.n == p.rows));
      CHECK((gd.m == H && gd.k == F && gd.lda == H && gd.ldb == F && gd.ldc == H && gd.n == p.rows));
      CHECK_FALSE((gu.trans_a || gu.trans_b || gd.trans_a || gd.trans_b));
      blas_reference(gu, w_up, xp, up);
      blas_reference(gd, w_down, act, z);
      flops += gu.flops() + gd.flops();
    }
    // 9 routed rows, 2 (H U + F H) each: gated 2 (24 + 12) 9 = 648, plain 2 (12 + 12) 9 = 432.
    CHECK(flops == (gated ? 648 : 432));
    i64 first = 0;
    for (i64 e = 0; e < E; ++e) {
      for (i64 r = first; r < first + counts[static_cast<std::size_t>(e)]; ++r) {
        for (i64 c = 0; c < U; ++c) {  // up[r] = xp[r] W_up,e
          double dot = 0;
          for (i64 l = 0; l < H; ++l) dot += at(xp, r * H + l) * at(w_up, e * H * U + l * U + c);
          CHECK(at(up, r * U + c) == Approx(dot).margin(1e-12));
        }
        for (i64 c = 0; c < H; ++c) {  // z[r] = act[r] W_down,e
          double dot = 0;
          for (i64 l = 0; l < F; ++l) dot += at(act, r * F + l) * at(w_down, e * F * H + l * H + c);
          CHECK(at(z, r * H + c) == Approx(dot).margin(1e-12));
        }
      }
      first += counts[static_cast<std::size_t>(e)];
    }
  }
}
