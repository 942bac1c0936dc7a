// The one thread pool smelt uses: the scaling-law fit's starts and bootstrap
// resamples, and the CUDA backend's weight drawing and conversion.
#pragma once

#include <cstddef>
#include <functional>

namespace smelt::detail {

// Runs body(i) for every i in [0, count) on up to `threads` threads (0: one
// per hardware thread), this one among them; after the first failure no new
// index starts, and that failure is rethrown once every thread has finished.
// Every thread is started before any works. When the system refuses to start
// one (a process or address-space limit), the limit is near and the work
// itself still needs memory (each thread's stack and malloc arena): all but
// one thread per core (at most half of those started) leave without working
// and are joined at once, and the rest share the work. More threads than
// cores would not have been faster; the result is the same either way.
void parallel_for(std::size_t count, std::size_t threads, const std::function<void(std::size_t)>& body);

}  // namespace smelt::detail
