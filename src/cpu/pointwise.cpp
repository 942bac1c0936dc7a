#include "cpu/pointwise.hpp"

#include <algorithm>
#include <cmath>

#include <Eigen/Dense>

#include "cpu/array_view.hpp"

namespace smelt::cpu {
namespace {

using Elements = Eigen::Index;

constexpr double kRmsEps = 1e-6;
constexpr double kGelu0 = 0.7978845608028654, kGelu1 = 0.044715;  // sqrt(2/pi), and tanh-GELU's cubic
// torch.optim.AdamW's defaults but the learning rate.
constexpr double kLr = 1e-4, kBeta1 = 0.9, kBeta2 = 0.999, kAdamEps = 1e-8, kWeightDecay = 1e-2;

Elements span_of(std::int64_t v) { return static_cast<Elements>(v); }

}  // namespace

template <class T>
void rms_norm(const T* in, const T* weight, T* out, T* rstd, std::int64_t rows, std::int64_t width) {
  const ConstArrayView<T> gw(weight, span_of(width));
  for (std::int64_t t = 0; t < rows; ++t) {
    const ConstArrayView<T> xr(in + t * width, span_of(width));
    const T r = T(1) / std::sqrt(xr.square().sum() / static_cast<T>(width) + static_cast<T>(kRmsEps));
    rstd[t] = r;
    ArrayView<T>(out + t * width, span_of(width)) = xr * r * gw;
  }
}

template <class T>
void rms_norm_backward(const T* dy, const T* in, const T* rstd, const T* weight, T* dweight, T* dx, std::int64_t rows,
                       std::int64_t width) {
  const ConstArrayView<T> gw(weight, span_of(width));
  ArrayView<T> dg(dweight, span_of(width));
  for (std::int64_t t = 0; t < rows; ++t) {
    const ConstArrayView<T> xr(in + t * width, span_of(width)), dr(dy + t * width, span_of(width));
    const T r = rstd[t];
    const T coef = (dr * gw * xr).sum() * r * r * r / static_cast<T>(width);
    dg += dr * xr * r;
    ArrayView<T>(dx + t * width, span_of(width)) += r * gw * dr - coef * xr;
  }
}

template <class T>
void ffn_activation(bool gated, const T* g, const T* u, T* h, std::int64_t size) {
  const ConstArrayView<T> U(u, span_of(size));
  if (gated) {
    const ConstArrayView<T> G(g, span_of(size));
    ArrayView<T>(h, span_of(size)) = G / (T(1) + (-G).exp()) * U;
  } else {
    const T k0 = static_cast<T>(kGelu0), k1 = static_cast<T>(kGelu1);
    ArrayView<T>(h, span_of(size)) = static_cast<T>(0.5) * U * (T(1) + (k0 * (U + k1 * U.cube())).tanh());
  }
}

template <class T>
void ffn_activation_backward(bool gated, const T* g, const T* u, T* dh, T* dg, T* scratch, std::int64_t size) {
  ArrayView<T> DH(dh, span_of(size)), aux(scratch, span_of(size));
  const ConstArrayView<T> U(u, span_of(size));
  if (gated) {
    const ConstArrayView<T> G(g, span_of(size));
    aux = (T(1) + (-G).exp()).inverse();  // sigmoid(g)
    ArrayView<T>(dg, span_of(size)) = DH * U * aux * (T(1) + G * (T(1) - aux));
    DH = DH * G * aux;
  } else {
    const T k0 = static_cast<T>(kGelu0), k1 = static_cast<T>(kGelu1);
    aux = (k0 * (U + k1 * U.cube())).tanh();
    DH = DH * (static_cast<T>(0.5) * (T(1) + aux) +
               static_cast<T>(0.5) * U * (T(1) - aux.square()) * k0 * (T(1) + 3 * k1 * U.square()));
  }
}

template <class T>
void adamw_update(T* params, T* m, T* v, const T* grads, std::int64_t size, std::int64_t step) {
  const double c1 = 1 - std::pow(kBeta1, static_cast<double>(step));
  const double c2 = 1 - std::pow(kBeta2, static_cast<double>(step));
  const T b1 = static_cast<T>(kBeta1), b2 = static_cast<T>(kBeta2);
  const T rate = static_cast<T>(kLr / c1), root = static_cast<T>(std::sqrt(c2)), eps = static_cast<T>(kAdamEps);
  const T decay = static_cast<T>(1 - kLr * kWeightDecay);
  // In blocks that stay in cache, so that the three updates make one pass over memory, as a fused AdamW does.
  constexpr std::int64_t kBlock = 4096;
  for (std::int64_t at = 0; at < size; at += kBlock) {
    const Elements len = span_of(std::min(kBlock, size - at));
    ArrayView<T> P(params + at, len), M(m + at, len), V(v + at, len);
    const ConstArrayView<T> G(grads + at, len);
    M = b1 * M + (T(1) - b1) * G;
    V = b2 * V + (T(1) - b2) * G.square();
    P = P * decay - rate * M / (V.sqrt() / root + eps);
  }
}

template void rms_norm(const float*, const float*, float*, float*, std::int64_t, std::int64_t);
template void rms_norm_backward(const float*, const float*, const float*, const float*, float*, float*, std::int64_t,
                                std::int64_t);
template void ffn_activation(bool, const float*, const float*, float*, std::int64_t);
template void ffn_activation_backward(bool, const float*, const float*, float*, float*, float*, std::int64_t);
template void adamw_update(float*, float*, float*, const float*, std::int64_t, std::int64_t);
template void rms_norm(const double*, const double*, double*, double*, std::int64_t, std::int64_t);
template void rms_norm_backward(const double*, const double*, const double*, const double*, double*, double*,
                                std::int64_t, std::int64_t);
template void ffn_activation(bool, const double*, const double*, double*, std::int64_t);
template void ffn_activation_backward(bool, const double*, const double*, double*, double*, double*, std::int64_t);
template void adamw_update(double*, double*, double*, const double*, std::int64_t, std::int64_t);

}  // namespace smelt::cpu
