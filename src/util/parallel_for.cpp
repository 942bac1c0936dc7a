#include "util/parallel_for.hpp"

#include <algorithm>
#include <atomic>
#include <exception>
#include <limits>
#include <mutex>
#include <system_error>
#include <thread>
#include <vector>

namespace smelt::detail {

void parallel_for(std::size_t count, std::size_t threads, const std::function<void(std::size_t)>& body) {
  const std::size_t cores = std::max(1u, std::thread::hardware_concurrency());
  if (threads == 0) threads = cores;
  std::atomic<std::size_t> next{0};
  std::atomic<std::size_t> workers{std::numeric_limits<std::size_t>::max()};  // ids below this work
  std::atomic<bool> go{false};                                                // the pool is complete: workers are known
  std::atomic<bool> ready{false};  // the threads past `workers` are gone: their stacks no longer take memory
  std::exception_ptr failure;
  std::mutex mutex;
  auto work = [&](std::size_t id) {
    go.wait(false);
    if (id >= workers.load()) return;
    ready.wait(false);
    try {
      for (std::size_t i; id < workers.load() && (i = next.fetch_add(1)) < count;) body(i);
    } catch (...) {
      const std::lock_guard lock(mutex);
      if (!failure) failure = std::current_exception();
      next = count;
    }
  };
  std::vector<std::thread> pool;
  std::size_t keep = std::numeric_limits<std::size_t>::max();
  try {
    for (std::size_t t = 1; t < std::min(threads, count); ++t) pool.emplace_back(work, t);
  } catch (const std::exception&) {  // std::system_error, or bad_alloc for the thread's own state
    keep = std::min<std::size_t>(pool.size() / 2, cores - 1);
    workers = keep + 1;  // ids 0 (this thread) to keep
  }
  go = true;
  go.notify_all();
  if (keep < pool.size()) {
    for (std::size_t t = keep; t < pool.size(); ++t) pool[t].join();
    pool.resize(keep);
  }
  // Only now does any body run: under an address-space limit the threads that had to go would otherwise still
  // hold their stacks while the first bodies allocate (std::bad_alloc one run in three under `ulimit -v`).
  ready = true;
  ready.notify_all();
  work(0);
  for (auto& t : pool) t.join();
  if (failure) std::rethrow_exception(failure);
}

}  // namespace smelt::detail
