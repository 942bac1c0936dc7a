// A benchmark backend that lives in a shared library and is loaded only when a
// run first asks for it. The CUDA backend is one: smelt-match registers it
// this way so that no command but bench loads the CUDA libraries, and a
// machine without them (or without a GPU driver) still runs the CPU backend.
#pragma once

#include <filesystem>
#include <memory>
#include <string>

#include "smelt/bench_backend.hpp"

namespace smelt {

// The entry points such a module exports (kernels/backend/module.cpp): the
// smelt version it was built against, which must equal this library's
// (SMELT_VERSION) because the module shares its types, and a factory.
inline constexpr const char* kBenchModuleVersionSymbol = "smelt_bench_module_version";
inline constexpr const char* kBenchModuleCreateSymbol = "smelt_bench_module_create";
extern "C" {
using BenchModuleVersionFn = const char* (*)();
// Returns a new backend the caller owns, or nullptr when it cannot make one.
using BenchModuleCreateFn = BenchBackend* (*)();
}

// A backend named `name` whose module at `path` is loaded (dlopen) the first
// time unavailable() or run() is called; registering it costs nothing. Until
// the module loads, unavailable() says why it cannot (the loader's message:
// the file missing, a CUDA library missing, a version mismatch), and run()
// throws cuda_error with that reason. A loaded module stays loaded.
std::shared_ptr<BenchBackend> make_module_backend(std::string name, std::filesystem::path path);

}  // namespace smelt
