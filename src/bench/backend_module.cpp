// make_module_backend(): a BenchBackend that loads its implementation from a
// shared library on first use (include/smelt/bench_module.hpp).
#include <dlfcn.h>

#include <cstring>
#include <mutex>
#include <utility>

#include <fmt/format.h>

#include "smelt/bench_module.hpp"
#include "smelt/error.hpp"
#include "smelt/version.hpp"

namespace smelt {
namespace {

// The loaded backend, or why there is none.
struct Loaded {
  std::shared_ptr<BenchBackend> backend;
  std::string error;
};

Loaded load(const std::string& name, const std::filesystem::path& path) {
  const auto fail = [&](const std::string& why) {
    return Loaded{nullptr, fmt::format("cannot load the {} backend's module: {}", name, why)};
  };
  // RTLD_LOCAL: the module's symbols (its CUDA libraries' too) stay its own.
  // Never closed: the backend's code, vtable and the exceptions it throws must
  // outlive every use, up to the end of the program.
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* why = dlerror();
    return fail(why != nullptr ? why : path.string() + ": dlopen failed");
  }
  const auto version = reinterpret_cast<BenchModuleVersionFn>(dlsym(handle, kBenchModuleVersionSymbol));
  const auto create = reinterpret_cast<BenchModuleCreateFn>(dlsym(handle, kBenchModuleCreateSymbol));
  if (version == nullptr || create == nullptr)
    return fail(fmt::format("{}: not a smelt backend module (no {} or {})", path.string(), kBenchModuleVersionSymbol,
                            kBenchModuleCreateSymbol));
  // The module shares this library's types (LayerPlan, BenchResult): another
  // version's layout would be read wrongly.
  if (std::strcmp(version(), SMELT_VERSION) != 0)
    return fail(fmt::format("{}: built for smelt {}, this is smelt {}", path.string(), version(), SMELT_VERSION));
  std::shared_ptr<BenchBackend> backend(create());
  if (!backend) return fail(fmt::format("{}: the module made no backend", path.string()));
  return Loaded{std::move(backend), {}};
}

class ModuleBackend : public BenchBackend {
 public:
  ModuleBackend(std::string name, std::filesystem::path path) : name_(std::move(name)), path_(std::move(path)) {}

  std::string name() const override { return name_; }

  std::optional<std::string> unavailable() const override {
    const Loaded& l = loaded();
    if (!l.backend) return l.error;
    return l.backend->unavailable();
  }

  BenchResult run(const LayerPlan& plan, const BenchOptions& options) override {
    const Loaded& l = loaded();
    if (!l.backend) throw cuda_error(l.error);
    return l.backend->run(plan, options);
  }

 private:
  const Loaded& loaded() const {
    std::call_once(once_, [this] { loaded_ = load(name_, path_); });
    return loaded_;
  }

  std::string name_;
  std::filesystem::path path_;
  mutable std::once_flag once_;
  mutable Loaded loaded_;
};

}  // namespace

std::shared_ptr<BenchBackend> make_module_backend(std::string name, std::filesystem::path path) {
  return std::make_shared<ModuleBackend>(std::move(name), std::move(path));
}

}  // namespace smelt
