// Runs the benchmark's own CUDA kernels (kernels/*.cuh) on the CPU, so that
// their results are tested wherever the CUDA toolkit's headers are, a GPU or
// not. Only what those kernels use is emulated:
// - a launch runs the blocks one after another, each block's threads as
//   std::threads, with threadIdx, blockIdx, blockDim and gridDim per thread;
// - __syncthreads is a barrier over the block; __syncwarp and the shuffles
//   are barriers over the warp's 32 threads with an exchange slot per lane;
//   a thread that returns drops out of both, as an exited thread does on a GPU;
// - __shared__ variables become static (one copy, shared by the threads of the
//   one block running); dynamic shared memory is poisoned (0xff bytes) before
//   each block, so a kernel that reads it before writing it gets garbage;
// - atomicAdd is a std::atomic_ref fetch_add;
// - SMELT_LAUNCH runs the launch at once, in issue order (see launcher below).
// It says nothing about speed, and nothing about memory ordering beyond what
// the barriers give. Include it before any kernel header, in a test that links
// no CUDA library (the kernels are compiled as host C++; fake_cuda.cpp stands
// in for the runtime and cuBLAS where a test needs them).
#pragma once

#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <atomic>
#include <barrier>
#include <cstdint>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <thread>
#include <vector>

#undef __shared__
#define __shared__ static

namespace smelt_emulation {

struct Warp {
  std::barrier<> barrier{32};
  std::uint64_t slot[32] = {};
};

struct Block {
  Block(unsigned threads, std::size_t shared_bytes)
      : barrier(static_cast<std::ptrdiff_t>(threads)), warps(new Warp[threads / 32]), shared(shared_bytes, 0xff) {}
  std::barrier<> barrier;
  std::unique_ptr<Warp[]> warps;
  std::vector<unsigned char> shared;
};

inline thread_local Block* block = nullptr;
inline thread_local Warp* warp = nullptr;
inline thread_local unsigned lane = 0;

// Every lane publishes v, then reads lane src's value.
template <class T>
T exchange(T v, unsigned src) {
  static_assert(sizeof(T) <= sizeof(std::uint64_t));
  std::memcpy(&warp->slot[lane], &v, sizeof v);
  warp->barrier.arrive_and_wait();
  T out;
  std::memcpy(&out, &warp->slot[src & 31u], sizeof out);
  warp->barrier.arrive_and_wait();  // nobody overwrites a slot before every lane has read
  return out;
}

}  // namespace smelt_emulation

inline thread_local uint3 threadIdx, blockIdx;
inline thread_local dim3 blockDim, gridDim;

inline void __syncthreads() { smelt_emulation::block->barrier.arrive_and_wait(); }
inline void __syncwarp(unsigned = 0xffffffffu) { smelt_emulation::warp->barrier.arrive_and_wait(); }

template <class T>
T __shfl_sync(unsigned, T v, int src) {
  return smelt_emulation::exchange(v, static_cast<unsigned>(src));
}
template <class T>
T __shfl_xor_sync(unsigned, T v, int mask) {
  return smelt_emulation::exchange(v, smelt_emulation::lane ^ static_cast<unsigned>(mask));
}
// Lanes below delta keep their own value.
template <class T>
T __shfl_up_sync(unsigned, T v, unsigned delta) {
  const unsigned lane = smelt_emulation::lane;
  return smelt_emulation::exchange(v, lane >= delta ? lane - delta : lane);
}

inline int min(int a, int b) { return a < b ? a : b; }  // CUDA's device min for ints

inline int atomicAdd(int* address, int value) { return std::atomic_ref<int>(*address).fetch_add(value); }

template <class T>
T* dynamic_shared() {
  return reinterpret_cast<T*>(smelt_emulation::block->shared.data());
}

namespace smelt_emulation {

// kernel<<<grid, threads, shared_bytes>>>(args...), one-dimensional.
template <class Kernel, class... Args>
void launch(unsigned grid, unsigned threads, std::size_t shared_bytes, Kernel kernel, Args... args) {
  if (grid == 0 || threads == 0 || threads % 32 != 0 || threads > 1024)
    throw std::invalid_argument(
        "emulated launch: needs a grid of at least one block of 32 to 1024 threads, a whole number of warps");
  for (unsigned b = 0; b < grid; ++b) {
    Block blk(threads, shared_bytes);
    std::vector<std::thread> pool;
    pool.reserve(threads);
    for (unsigned t = 0; t < threads; ++t)
      pool.emplace_back([&, t] {
        threadIdx = uint3{t, 0, 0};
        blockIdx = uint3{b, 0, 0};
        blockDim = dim3(threads);
        gridDim = dim3(grid);
        block = &blk;
        warp = &blk.warps[t / 32];
        lane = t % 32;
        kernel(args...);
        warp->barrier.arrive_and_drop();
        blk.barrier.arrive_and_drop();
      });
    for (std::thread& th : pool) th.join();
  }
}

// What SMELT_LAUNCH (kernels/device_common.cuh) expands to on the host:
// launcher(kernel, grid, block, shared, stream)(args...) runs the launch at
// once (streams are ignored: everything runs in issue order), with at most
// kMaxBlocks blocks of at most kMaxThreads threads. Every kernel here is a
// grid-stride loop over its work and takes any whole number of warps per
// block, so a smaller launch computes the same result with fewer threads to
// start (tests/kernels/emulated/kernels_emulated_test.cpp runs them at their real sizes too).
inline constexpr long kMaxBlocks = 4, kMaxThreads = 64;

template <class Kernel>
auto launcher(Kernel kernel, long grid, long threads, std::size_t shared_bytes = 0, cudaStream_t = nullptr) {
  return [=](auto... args) {
    launch(static_cast<unsigned>(std::min(grid, kMaxBlocks)), static_cast<unsigned>(std::min(threads, kMaxThreads)),
           shared_bytes, kernel, args...);
  };
}

}  // namespace smelt_emulation
