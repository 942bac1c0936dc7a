// A run of contiguous elements as an Eigen array, for the cpu kernels' elementwise work (attention's score rows,
// the pointwise ops): one view type for the module, where its files once named their own.
#pragma once

#include <Eigen/Dense>

namespace smelt::cpu {

template <class T>
using ArrayView = Eigen::Map<Eigen::Array<T, Eigen::Dynamic, 1>>;
template <class T>
using ConstArrayView = Eigen::Map<const Eigen::Array<T, Eigen::Dynamic, 1>>;

}  // namespace smelt::cpu
