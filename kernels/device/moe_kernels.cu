// Launchers of the MoE sublayer's kernels (moe_kernels.cuh): grid sizes, the
// vector width each buffer's alignment allows, and a checked launch.
#include <algorithm>
#include <climits>
#include <cstdint>

#include "device/cuda_check.hpp"
#include "device/layer_kernels.hpp"
#include "device/moe_kernels.cuh"
#include "smelt/error.hpp"

namespace smelt::kernels {
namespace {

using namespace device;

int blocks_for(std::int64_t work, std::int64_t per_block, std::int64_t cap = 8192) {
  return static_cast<int>(std::clamp<std::int64_t>((work + per_block - 1) / per_block, 1, cap));
}

bool aligned16(const void* p) { return (reinterpret_cast<std::uintptr_t>(p) & 15u) == 0; }

void check_launch() { SMELT_CUDA_CALL(cudaGetLastError()); }

}  // namespace

std::optional<std::string> kernel_image_problem() {
  cudaFuncAttributes attributes{};
  // Asked for its status, not checked: a missing image is an answer here, not a failure.
  const cudaError_t status = cudaFuncGetAttributes(&attributes, reinterpret_cast<const void*>(router_topk_kernel));
  if (status == cudaSuccess) return std::nullopt;
  (void)cudaGetLastError();  // clear it, so that it does not surface at the next checked call
  return std::string("the CUDA kernels cannot run on this device: ") + cudaGetErrorString(status);
}

void router_topk(const float* logits, std::int64_t tokens, int experts, int top_k, bool sigmoid, bool balanced,
                 int* topk_idx, float* topk_w, int* counts, cudaStream_t stream) {
  if (experts < 1 || experts > kMaxExperts || top_k < 1 || top_k > experts)
    throw config_error("router: needs 1 <= top_k <= experts <= " + std::to_string(kMaxExperts) + ", got top_k " +
                       std::to_string(top_k) + ", experts " + std::to_string(experts));
  if (tokens == 0) return;
  const std::size_t shared = static_cast<std::size_t>(experts) * sizeof(int);
  SMELT_LAUNCH(router_topk_kernel, blocks_for(tokens, kWarpsPerBlock, 1024), kThreads, shared, stream)
  (logits, tokens, experts, top_k, sigmoid, balanced, topk_idx, topk_w, counts);
  check_launch();
}

void expert_offsets(const int* counts, int experts, int* offsets, int* cursor, cudaStream_t stream) {
  SMELT_LAUNCH(offsets_kernel, 1, kScanThreads, 0, stream)(counts, experts, offsets, cursor);
  check_launch();
}

void permute_rows(const bf16* x, std::int64_t tokens, std::int64_t hidden, int top_k, const int* topk_idx, int* cursor,
                  int* slot, bf16* xp, cudaStream_t stream) {
  const std::int64_t pairs = tokens * top_k;
  if (pairs == 0) return;
  const int blocks = blocks_for(pairs, kWarpsPerBlock);
  if (hidden % 8 == 0 && aligned16(x) && aligned16(xp))
    SMELT_LAUNCH(permute_kernel<8>, blocks, kThreads, 0, stream)(x, pairs, hidden, top_k, topk_idx, cursor, slot, xp);
  else
    SMELT_LAUNCH(permute_kernel<1>, blocks, kThreads, 0, stream)(x, pairs, hidden, top_k, topk_idx, cursor, slot, xp);
  check_launch();
}

void ffn_activation(const bf16* in, std::int64_t rows, std::int64_t width, bool gated, bf16* out, cudaStream_t stream) {
  if (rows == 0 || width == 0) return;
  if (width % 8 == 0 && aligned16(in) && aligned16(out))
    SMELT_LAUNCH(activation_kernel<8>, blocks_for(rows * width / 8, kThreads), kThreads, 0, stream)
  (in, rows, width, gated, out);
  else SMELT_LAUNCH(activation_kernel<1>, blocks_for(rows * width, kThreads), kThreads, 0, stream)(in, rows, width,
                                                                                                   gated, out);
  check_launch();
}

void moe_combine(const float* x_in, const bf16* z, const int* slot, const float* topk_w, int top_k, const float* shared,
                 const float* shared_gate_logit, std::int64_t tokens, std::int64_t hidden, float scale, float* x_out,
                 bf16* xb, cudaStream_t stream) {
  if (tokens == 0) return;
  const bool vec = hidden % 4 == 0 && aligned16(x_in) && aligned16(x_out) && aligned16(z) && aligned16(xb) &&
                   (shared == nullptr || aligned16(shared));
  if (vec) SMELT_LAUNCH(combine_kernel<4>, blocks_for(tokens * hidden / 4, kThreads), kThreads, 0, stream)
  (x_in, z, slot, topk_w, top_k, shared, shared_gate_logit, tokens, hidden, scale, x_out, xb);
  else SMELT_LAUNCH(combine_kernel<1>, blocks_for(tokens * hidden, kThreads), kThreads, 0, stream)(
      x_in, z, slot, topk_w, top_k, shared, shared_gate_logit, tokens, hidden, scale, x_out, xb);
  check_launch();
}

void residual_add(const float* x_in, const float* delta, std::int64_t count, float scale, float* x_out, bf16* xb,
                  cudaStream_t stream) {
  if (count == 0) return;
  if (count % 4 == 0 && aligned16(x_in) && aligned16(delta) && aligned16(x_out) && aligned16(xb))
    SMELT_LAUNCH(residual_kernel<4>, blocks_for(count / 4, kThreads), kThreads, 0, stream)
  (x_in, delta, count, scale, x_out, xb);
  else SMELT_LAUNCH(residual_kernel<1>, blocks_for(count, kThreads), kThreads, 0, stream)(x_in, delta, count, scale,
                                                                                          x_out, xb);
  check_launch();
}

void fill_random_bf16(bf16* out, std::size_t count, std::uint64_t seed, cudaStream_t stream) {
  if (count == 0) return;
  SMELT_LAUNCH(random_bf16_kernel, blocks_for(static_cast<std::int64_t>(count), kThreads), kThreads, 0, stream)
  (out, count, seed);
  check_launch();
}

}  // namespace smelt::kernels
