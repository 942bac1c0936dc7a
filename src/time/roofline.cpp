#include "time/roofline.hpp"

#include <algorithm>

namespace smelt::time_detail {
namespace {

double saturation(double size, double half) { return size / (size + half); }

// A collective (ops.cpp): op.m ranks over op.n consecutive ranks, op.k its kind (0 all-reduce, 1 all-to-all,
// 2 send); op.bytes the buffer one rank holds. Ring all-reduce: 2 (p - 1) steps moving 2 (p - 1) / p of it;
// all-to-all: p - 1 steps moving (p - 1) / p of it; a send: one step moving all of it.
double collective_seconds(const Op& op, const HardwareSpec& hw) {
  const double p = static_cast<double>(op.m);
  const bool in_node = op.n <= hw.devices_per_node;
  const double alpha = in_node ? hw.link_latency : hw.network_latency;
  const double beta = in_node ? hw.link_bandwidth : hw.network_bandwidth;
  switch (op.k) {
    case 0:
      return 2 * (p - 1) * alpha + 2 * (p - 1) / p * op.bytes / beta;
    case 1:
      return (p - 1) * alpha + (p - 1) / p * op.bytes / beta;
    default:
      return alpha + op.bytes / beta;
  }
}

}  // namespace

double gemm_efficiency(const HardwareSpec& hw, std::int64_t m, std::int64_t n, std::int64_t k) {
  const double half = hw.gemm_half_size;
  return hw.gemm_efficiency * saturation(static_cast<double>(m), half) * saturation(static_cast<double>(n), half) *
         saturation(static_cast<double>(k), half);
}

void put_time(Op& op, const HardwareSpec& hw, Dtype dtype) {
  if (op.kind == OpKind::collective) {
    op.seconds = collective_seconds(op, hw);
    op.bound = Bound::communication;
    return;
  }
  if (op.kind == OpKind::bubble) {
    op.bound = Bound::overhead;
    return;
  }
  // The FLOP rate the op reaches: a calibration's measured rate at a GEMM's shape (a grouped GEMM's, one group's),
  // else the peak times the efficiency.
  double rate = 0;
  const bool gemm = op.kind == OpKind::gemm || op.kind == OpKind::grouped_gemm;
  if (gemm && hw.gemm_table)
    rate = hw.gemm_table->rate(op.m, op.n, op.k);
  else if (gemm)
    rate = hw.peak_flops(dtype) * gemm_efficiency(hw, op.m, op.n, op.k);
  else if (op.kind == OpKind::attention)
    rate = hw.peak_flops(dtype) * hw.attention_efficiency;
  const double compute = op.flops > 0 && rate > 0 ? op.flops / rate : 0;
  const double memory = op.bytes / (hw.memory_bandwidth * hw.memory_efficiency);
  op.seconds = std::max(compute, memory) + hw.op_overhead;
  op.bound = hw.op_overhead > std::max(compute, memory) ? Bound::overhead
             : compute >= memory                        ? Bound::compute
                                                        : Bound::memory;
}

}  // namespace smelt::time_detail
