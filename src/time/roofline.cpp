#include "time/roofline.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include <fmt/format.h>

#include "smelt/detail/excerpt.hpp"
#include "smelt/error.hpp"

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

// The spec's numbers an op's time divides by, as "field = value" (a rate with its efficiency).
std::string inputs_of(const Op& op, const HardwareSpec& hw, Dtype dtype) {
  if (op.kind == OpKind::collective) {
    const bool in_node = op.n <= hw.devices_per_node;
    return in_node
               ? fmt::format("link_bandwidth = {}, link_latency = {}", hw.link_bandwidth, hw.link_latency)
               : fmt::format("network_bandwidth = {}, network_latency = {}", hw.network_bandwidth, hw.network_latency);
  }
  const std::string memory =
      fmt::format("memory_bandwidth = {:.4g} x memory_efficiency = {}", hw.memory_bandwidth, hw.memory_efficiency);
  const std::string peak = fmt::format(
      "peak_flops_{} = {:.4g}", to_string(dtype == Dtype::automatic ? Dtype::bf16 : dtype), hw.peak_flops(dtype));
  if ((op.kind == OpKind::gemm || op.kind == OpKind::grouped_gemm) && hw.gemm_table)
    return fmt::format("the calibration's rate {:.4g} at this shape, {}", hw.gemm_table->rate(op.m, op.n, op.k),
                       memory);
  if (op.kind == OpKind::gemm || op.kind == OpKind::grouped_gemm)
    return fmt::format("{} x gemm_efficiency = {} (gemm_half_size = {}), {}", peak, hw.gemm_efficiency,
                       hw.gemm_half_size, memory);
  if (op.kind == OpKind::attention)
    return fmt::format("{} x attention_efficiency = {}, {}", peak, hw.attention_efficiency, memory);
  return memory;
}

// Every time the model computes is finite and not negative: NaN and infinity compare false with everything, so one
// that went on would pass any limit and match any target (the solver compares times as integers).
void check_finite(const Op& op, const HardwareSpec& hw, Dtype dtype) {
  if (op.seconds >= 0 && op.seconds <= std::numeric_limits<double>::max()) return;
  const std::string shape = op.kind == OpKind::gemm || op.kind == OpKind::grouped_gemm
                                ? fmt::format(" {} x {} x {}{}", op.m, op.n, op.k,
                                              op.groups > 1 ? fmt::format(" in {} groups", op.groups) : "")
                                : "";
  throw overflow_error(
      fmt::format("the time of op {} ({}{}, {:.4g} FLOPs, {:.4g} bytes) on {} is {} s, not a finite "
                  "time: {}",
                  op.name, to_string(op.kind), shape, op.flops, op.bytes, detail::name_excerpt(hw.name), op.seconds,
                  inputs_of(op, hw, dtype)));
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
    check_finite(op, hw, dtype);
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
  check_finite(op, hw, dtype);
}

}  // namespace smelt::time_detail
