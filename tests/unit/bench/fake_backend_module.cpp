// A backend module for bench_module_test.cpp: the entry points of
// include/smelt/bench_module.hpp, a backend named "fake" that is available and
// whose run() throws, and (with SMELT_FAKE_MODULE_VERSION) a version other
// than the library's.
#include "smelt/bench_module.hpp"
#include "smelt/error.hpp"
#include "smelt/version.hpp"

#ifndef SMELT_FAKE_MODULE_VERSION
#define SMELT_FAKE_MODULE_VERSION SMELT_VERSION
#endif

namespace {

class FakeBackend : public smelt::BenchBackend {
 public:
  std::string name() const override { return "fake"; }
  std::optional<std::string> unavailable() const override { return std::nullopt; }
  smelt::BenchResult run(const smelt::LayerPlan& plan, const smelt::BenchOptions&) override {
    throw smelt::config_error("fake module ran " + std::to_string(plan.tokens) + " tokens");
  }
};

}  // namespace

extern "C" {
__attribute__((visibility("default"))) const char* smelt_bench_module_version() { return SMELT_FAKE_MODULE_VERSION; }
__attribute__((visibility("default"))) smelt::BenchBackend* smelt_bench_module_create() { return new FakeBackend(); }
}
