// make_module_backend (include/smelt/bench_module.hpp): a backend loaded from
// a shared library on first use, and the reasons it gives when it cannot be.
#include <catch2/catch.hpp>

#include <string>

#include "smelt/bench_module.hpp"
#include "smelt/error.hpp"
#include "smelt/version.hpp"

using namespace smelt;

namespace {

std::string run_message(BenchBackend& backend) {
  LayerPlan plan;
  plan.tokens = 7;
  try {
    backend.run(plan, BenchOptions{});
  } catch (const error& e) {
    return e.what();
  }
  return "no error";
}

}  // namespace

TEST_CASE("a module backend is loaded on first use and runs the module's backend", "[bench_module]") {
  const auto backend = make_module_backend("fake", SMELT_FAKE_MODULE);
  CHECK(backend->name() == "fake");
  CHECK(backend->unavailable() == std::nullopt);
  // The module's exception crosses the library boundary as the library's type.
  CHECK(run_message(*backend) == "fake module ran 7 tokens");
  CHECK_THROWS_AS(backend->run(LayerPlan{}, BenchOptions{}), config_error);
}

TEST_CASE("a missing module says which file and why, and run() refuses with the same reason", "[bench_module]") {
  const auto backend = make_module_backend("cuda", "/nonexistent/libsmelt_cuda_backend.so");
  const std::string expected =
      "cannot load the cuda backend's module: /nonexistent/libsmelt_cuda_backend.so: cannot open shared object file: "
      "No such file or directory";
  CHECK(backend->unavailable() == expected);
  CHECK(run_message(*backend) == expected);
  // A module that cannot load is the machine's limit (exit 5), not bad input.
  CHECK_THROWS_AS(backend->run(LayerPlan{}, BenchOptions{}), cuda_error);
}

TEST_CASE("a library without the entry points is not taken for a module", "[bench_module]") {
  // libm is on every glibc system and exports neither entry point.
  const auto backend = make_module_backend("cuda", "libm.so.6");
  CHECK(backend->unavailable() ==
        "cannot load the cuda backend's module: libm.so.6: not a smelt backend module (no smelt_bench_module_version "
        "or smelt_bench_module_create)");
}

TEST_CASE("a module built for another smelt version is refused", "[bench_module]") {
  const auto backend = make_module_backend("fake", SMELT_FAKE_MODULE_OLD);
  CHECK(backend->unavailable() == std::string("cannot load the fake backend's module: ") + SMELT_FAKE_MODULE_OLD +
                                      ": built for smelt 0.0.1, this is smelt " + SMELT_VERSION);
}
