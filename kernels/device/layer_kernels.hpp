// Launchers for the benchmark's own kernels (moe_kernels.cu, attention_kernels.cu).
// Every launcher is asynchronous on `stream` and checks cudaGetLastError after
// the launch. Matrices are row-major; activations that feed cuBLAS are bf16,
// the residual stream and accumulators are fp32. This header is included from
// .cu files compiled as C++17, so it must not include the C++20 smelt headers.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include <cuda_bf16.h>
#include <cuda_runtime.h>

namespace smelt::kernels {

using bf16 = __nv_bfloat16;

// Keys a query may attend to within its sequence (positions p, j from 0):
// causal j <= p; sliding also p - window < j; chunked also j / chunk == p / chunk.
enum class Mask : int { causal = 0, sliding = 1, chunked = 2 };

// The largest expert count router_topk handles (one 64-bit mask per lane).
inline constexpr int kMaxExperts = 2048;

// Why this build's kernels cannot run on device 0 (no kernel image for its
// architecture), or nullopt when they can.
std::optional<std::string> kernel_image_problem();

// Router: scores = softmax(logits) or sigmoid(logits) per token [tokens x
// experts]; top-k by score (lower index wins ties), or in balanced mode token t
// gets experts (t k + j) mod E; weights = chosen scores / their sum. Writes
// topk_idx/topk_w [tokens x top_k] and adds the routed counts to `counts`
// (which the caller zeroes first).
void router_topk(const float* logits, std::int64_t tokens, int experts, int top_k, bool sigmoid, bool balanced,
                 int* topk_idx, float* topk_w, int* counts, cudaStream_t stream);

// offsets[e] = sum of counts[0..e) for e in [0, experts], and cursor[e] = offsets[e].
void expert_offsets(const int* counts, int experts, int* offsets, int* cursor, cudaStream_t stream);

// For every (token, j) pair p = t k + j: claims row slot[p] in its expert's
// range (atomic cursor) and copies x[t] there: xp [tokens k x hidden].
void permute_rows(const bf16* x, std::int64_t tokens, std::int64_t hidden, int top_k, const int* topk_idx, int* cursor,
                  int* slot, bf16* xp, cudaStream_t stream);

// gated: in [rows x 2 width] holds [gate | up] per row; out = silu(gate) * up.
// plain: in [rows x width]; out = gelu_tanh(in). out is [rows x width].
void ffn_activation(const bf16* in, std::int64_t rows, std::int64_t width, bool gated, bf16* out, cudaStream_t stream);

// x_out[t] = x_in[t] + scale * (sum_j topk_w[t,j] z[slot[t,j]] + g_t shared[t]),
// g_t = sigmoid(shared_gate_logit[t]) when that pointer is given, else 1; shared
// may be null. Also writes the bf16 copy xb. x_out may alias x_in.
void moe_combine(const float* x_in, const bf16* z, const int* slot, const float* topk_w, int top_k, const float* shared,
                 const float* shared_gate_logit, std::int64_t tokens, std::int64_t hidden, float scale, float* x_out,
                 bf16* xb, cudaStream_t stream);

// x_out = x_in + scale * delta over `count` elements, plus the bf16 copy xb.
// x_out may alias x_in.
void residual_add(const float* x_in, const float* delta, std::int64_t count, float scale, float* x_out, bf16* xb,
                  cudaStream_t stream);

// Deterministic pseudo-random bf16 values in [-1, 1] (GEMM-rate operands).
void fill_random_bf16(bf16* out, std::size_t count, std::uint64_t seed, cudaStream_t stream);

// Row r of `scores` [rows x context] (fp32, already scaled by 1/sqrt(d)) is the
// query at position r % context of its sequence: softmax over its visible keys,
// written as bf16 probabilities with zeros at masked keys.
void masked_softmax(const float* scores, std::int64_t rows, std::int64_t context, Mask mask, std::int64_t window,
                    std::int64_t chunk, bf16* probs, cudaStream_t stream);

}  // namespace smelt::kernels
