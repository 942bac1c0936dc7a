// The measured step's elementwise ops (step_model.hpp), vectorised by Eigen's array expressions: RMSNorm, the
// FFN activations and their backward, and AdamW. Private to the bench module.
#pragma once

#include <cstdint>

namespace smelt::cpu {

// out = x / rms(x) * weight per row of `width` (eps 1e-6); rstd[row] = 1 / rms.
template <class T>
void rms_norm(const T* in, const T* weight, T* out, T* rstd, std::int64_t rows, std::int64_t width);
// dx += the input's gradient, dweight += the weight's.
template <class T>
void rms_norm_backward(const T* dy, const T* in, const T* rstd, const T* weight, T* dweight, T* dx, std::int64_t rows,
                       std::int64_t width);

// The FFN's hidden activation: silu(g) * u (gated) or tanh-GELU(u) (plain), over `size` elements.
template <class T>
void ffn_activation(bool gated, const T* g, const T* u, T* h, std::int64_t size);
// From the hidden activation's gradient in `dh`: the up projection's gradient in `dh` (in place), the gate's in
// `dg` (gated only); `scratch` holds `size` elements.
template <class T>
void ffn_activation_backward(bool gated, const T* g, const T* u, T* dh, T* dg, T* scratch, std::int64_t size);

// One AdamW step (torch.optim.AdamW's defaults, learning rate 1e-4; `step` counts from 1) over `size` parameters,
// their moments and gradients, in cache-sized blocks: one pass over memory, 28 bytes a float32 parameter (p, g, m,
// v read; p, m, v written). The step's update, and the calibration's elementwise rate.
template <class T>
void adamw_update(T* params, T* m, T* v, const T* grads, std::int64_t size, std::int64_t step);

}  // namespace smelt::cpu
