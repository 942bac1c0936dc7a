// The benchmark's matrix products as cuBLAS sees them. cuBLAS is column-major
// and the benchmark's buffers are row-major, so every product is described
// here once, as plain numbers (no CUDA types), and tests/kernels/host/gemm_shapes_test.cpp
// runs these descriptions through a column-major reference GEMM on the CPU
// against the row-major products they stand for. gemm.cpp and layer_runner.cpp
// launch exactly these descriptions.
//
// The identity used throughout: a row-major matrix X [r x c] with row stride
// ld is, read column-major, X^T [c x r] with leading dimension ld. So the
// row-major C = A B is the column-major C^T = B^T A^T: cuBLAS's first operand
// is the row-major B, its second the row-major A.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

namespace smelt::kernels {

// One cuBLAS product, C = alpha op(A) op(B) + beta C in column-major terms,
// batched `batch` times with element strides between the batch members. The
// offsets are in elements from the base pointer of the buffer each operand
// lives in (which buffer is said where the description is made).
struct BlasGemm {
  bool trans_a = false, trans_b = false;
  std::int64_t m = 0, n = 0, k = 0;
  std::int64_t lda = 0, ldb = 0, ldc = 0;
  std::int64_t offset_a = 0, offset_b = 0, offset_c = 0;
  std::int64_t stride_a = 0, stride_b = 0, stride_c = 0;
  std::int64_t batch = 1;

  std::int64_t flops() const noexcept { return 2 * m * n * k * batch; }
};

// Row-major C [M x N] = A [M x K] B [K x N] with row strides lda, ldb, ldc:
// cuBLAS's A is the row-major B (ld ldb), its B the row-major A (ld lda).
inline BlasGemm row_major_gemm(std::int64_t M, std::int64_t N, std::int64_t K, std::int64_t lda, std::int64_t ldb,
                               std::int64_t ldc) {
  BlasGemm g;
  g.m = N, g.n = M, g.k = K;
  g.lda = ldb, g.ldb = lda, g.ldc = ldc;
  return g;
}

// The attention operands of one layer: the fused projection output qkv
// [tokens x (q | k | v)] row-major, tokens = sequences x context, with
// q = heads x head_dim and k, v = kv_heads x head_dim each.
struct AttentionShape {
  std::int64_t context = 0, sequences = 0;
  std::int64_t heads = 0, kv_heads = 0, head_dim = 0;

  std::int64_t q() const noexcept { return heads * head_dim; }
  std::int64_t kv() const noexcept { return kv_heads * head_dim; }
  std::int64_t qkv() const noexcept { return q() + 2 * kv(); }
  std::int64_t kv_head_of(std::int64_t head) const noexcept { return head / (heads / kv_heads); }
};

// Scores of query head `head`, batched over sequences: S [context x context]
// row-major per sequence (query rows), S = Q_h K_g^T, into a scores buffer of
// sequences x context x context. Column-major: S^T = K_g Q_h^T, so op(A) = T
// on the K columns, B = the Q columns. A and B index qkv, C the scores buffer.
inline BlasGemm attention_scores_gemm(const AttentionShape& s, std::int64_t head) {
  const std::int64_t ld = s.qkv(), c = s.context;
  BlasGemm g;
  g.trans_a = true;
  g.m = c, g.n = c, g.k = s.head_dim;
  g.lda = ld, g.ldb = ld, g.ldc = c;
  g.offset_a = s.q() + s.kv_head_of(head) * s.head_dim;
  g.offset_b = head * s.head_dim;
  g.stride_a = g.stride_b = c * ld, g.stride_c = c * c;
  g.batch = s.sequences;
  return g;
}

// Output of query head `head`: O_h [context x head_dim] = P V_g per sequence,
// written into the head's columns of attn [tokens x q]. Column-major: O_h^T =
// V_g^T P^T. A indexes qkv (the V columns), B the probabilities buffer (laid
// out as the scores), C attn.
inline BlasGemm attention_values_gemm(const AttentionShape& s, std::int64_t head) {
  const std::int64_t ld = s.qkv(), c = s.context;
  BlasGemm g;
  g.m = s.head_dim, g.n = c, g.k = c;
  g.lda = ld, g.ldb = c, g.ldc = s.q();
  g.offset_a = s.q() + s.kv() + s.kv_head_of(head) * s.head_dim;
  g.offset_b = 0;
  g.offset_c = head * s.head_dim;
  g.stride_a = c * ld, g.stride_b = c * c, g.stride_c = c * s.q();
  g.batch = s.sequences;
  return g;
}

// The expert products of one MoE visit. Expert e owns rows [offset_e,
// offset_e + rows_e) of the permuted buffers. Phase up: out [rows x U] = x
// [rows x H] W_up,e [H x U] (U = 2F gated: [gate | up] per row, F plain);
// phase down: z [rows x H] = act [rows x F] W_down,e [F x H]. Weights are
// stored expert after expert, row-major.
enum class ExpertPhase { up, down };

struct ExpertShape {
  std::int64_t hidden = 0, width = 0;  // H, F
  bool gated = true;

  std::int64_t up_width() const noexcept { return gated ? 2 * width : width; }
  // Output columns (cuBLAS m) and inner dimension (k) of a phase.
  std::int64_t out_cols(ExpertPhase p) const noexcept { return p == ExpertPhase::up ? up_width() : hidden; }
  std::int64_t in_cols(ExpertPhase p) const noexcept { return p == ExpertPhase::up ? hidden : width; }
};

// A indexes the phase's weights, B its input (xp or act), C its output (up_out or z).
inline BlasGemm expert_gemm(const ExpertShape& s, ExpertPhase phase, std::int64_t expert, std::int64_t rows,
                            std::int64_t offset) {
  const std::int64_t m = s.out_cols(phase), k = s.in_cols(phase);
  BlasGemm g = row_major_gemm(rows, m, k, k, m, m);
  g.offset_a = expert * k * m;
  g.offset_b = offset * k;
  g.offset_c = offset * m;
  return g;
}

// The experts that received rows, ordered by row count (stable, so by expert
// index within a count), and the groups of equal row count that one
// cublasGemmGroupedBatchedEx call takes: group g is group_size[g] consecutive
// problems with group_rows[g] rows each.
struct ExpertGroups {
  struct Problem {
    std::int64_t expert = 0, rows = 0, offset = 0;
  };
  std::vector<Problem> problems;
  std::vector<int> group_rows, group_size;
};

inline ExpertGroups group_experts(const std::vector<int>& counts) {
  ExpertGroups out;
  std::int64_t offset = 0;
  for (std::size_t e = 0; e < counts.size(); ++e) {
    if (counts[e] > 0) out.problems.push_back({static_cast<std::int64_t>(e), counts[e], offset});
    offset += counts[e];
  }
  std::stable_sort(out.problems.begin(), out.problems.end(),
                   [](const ExpertGroups::Problem& a, const ExpertGroups::Problem& b) { return a.rows < b.rows; });
  for (const ExpertGroups::Problem& p : out.problems) {
    if (out.group_rows.empty() || out.group_rows.back() != p.rows) {
      out.group_rows.push_back(static_cast<int>(p.rows));
      out.group_size.push_back(0);
    }
    ++out.group_size.back();
  }
  return out;
}

}  // namespace smelt::kernels
