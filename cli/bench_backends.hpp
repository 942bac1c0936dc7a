// bench's backends beyond the CPU reference, registered at start-up.
#pragma once

namespace smelt::cli {

// Registers the CUDA backend's module where this build has one (loaded only
// when bench asks for CUDA, or for auto): cheap, no library is opened here.
void register_bench_backends();

}  // namespace smelt::cli
