// What a fitted law implies: the compute-optimal frontier, the compute at a
// given loss, and the compute-equivalent gain of one architecture over another
// with its bootstrap interval (docs/scaling.md).
#pragma once

#include <optional>

#include "smelt/scaling_fit.hpp"

namespace smelt {

// Compute-optimal allocation at training compute C (FLOPs). For chinchilla,
// size = N*, tokens = D* with C = 6 N D; for smelt, size = F*, tokens = D*
// with C = F D at the given sparsity. tokens_per_parameter is D* over the
// parameter count: N* for chinchilla, the equivalent dense count F* / 6 for
// smelt (the SMELT paper's TPP), so 6 C / (k x*)^2 with k = 6 or 1.
struct Allocation {
  double compute = 0;
  double size = 0;
  double tokens = 0;
  double loss = 0;
  double tokens_per_parameter = 0;
};
Allocation optimal_allocation(const Law& law, double compute, double sparsity = 0);
// The compute at which the frontier loss equals `loss` (inverse of L*(C)).
// Throws config_error when `loss` is at or below the law's E.
double compute_for_loss(const Law& law, double loss, double sparsity = 0);
// Compute-equivalent gain of `target` over `reference` at compute C:
// 1 - C / C_ref with L*_ref(C_ref) = L*_target(C).
double compute_gain(const Law& target, const Law& reference, double compute, double sparsity = 0);
// The 2.5% / 97.5% percentiles of the gain over paired bootstrap samples
// (sample i of each law; the shorter list sets the count). nullopt when either
// law has no samples. A sample whose target frontier loss is at or below the
// reference sample's E counts as gain 1 (the limit); a sample with no frontier
// (a non-positive coefficient or exponent) is left out, and nullopt is
// returned when no sample is left.
struct Interval {
  double low, high;
};
std::optional<Interval> compute_gain_interval(const Law& target, const Law& reference, double compute,
                                              double sparsity = 0);
// The 2.5% / 97.5% percentiles of Allocation::tokens_per_parameter at compute
// C over the law's own bootstrap samples. A sample with no frontier, or whose
// TPP is not a positive finite double, is left out; nullopt when the law has
// no samples, or none is left.
std::optional<Interval> tokens_per_parameter_interval(const Law& law, double compute, double sparsity = 0);

}  // namespace smelt
