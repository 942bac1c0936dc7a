// An op's time on a device (docs/time.md, "The model"): the larger of its
// compute and memory times plus the fixed cost of an op; a collective by an
// alpha-beta model on the link its group spans.
#pragma once

#include "smelt/hardware.hpp"
#include "smelt/time.hpp"

namespace smelt::time_detail {

// The fraction of peak a GEMM of (m, n, k) reaches: gemm_efficiency x the
// product over its three sizes of size / (size + gemm_half_size).
double gemm_efficiency(const HardwareSpec& hw, std::int64_t m, std::int64_t n, std::int64_t k);

// Sets op.seconds and op.bound; `dtype` is the dtype the op computes in.
void put_time(Op& op, const HardwareSpec& hw, Dtype dtype);

}  // namespace smelt::time_detail
