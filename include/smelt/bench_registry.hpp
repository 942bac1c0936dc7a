// The backends run_bench chooses from: the CPU backend always, and those the
// program registers (the CUDA backend, through
// smelt::kernels::register_cuda_backend()).
#pragma once

#include <memory>

#include "smelt/bench_backend.hpp"

namespace smelt {

// Makes a backend available to run_bench. A backend registered under the name
// of one already there replaces it.
void register_bench_backend(std::shared_ptr<BenchBackend> backend);

}  // namespace smelt
