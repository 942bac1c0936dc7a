// The benchmark backends this build offers beyond the library's CPU one.
#include "bench_backends.hpp"

#include <filesystem>
#include <system_error>

#include "smelt/bench_module.hpp"
#include "smelt/bench_registry.hpp"

namespace smelt::cli {

void register_bench_backends() {
#ifdef SMELT_CUDA_MODULE_RELPATH
  // The module sits at a fixed place relative to this executable, in the build
  // tree and in the installed tree alike; nothing is loaded until bench asks.
  std::error_code ec;
  const std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  const std::filesystem::path dir = ec ? std::filesystem::path{} : exe.parent_path();
  smelt::register_bench_backend(
      smelt::make_module_backend("cuda", (dir / SMELT_CUDA_MODULE_RELPATH).lexically_normal()));
#endif
}

}  // namespace smelt::cli
