// smelt-match bench calibrate [--quick] [--repetitions N] [--out FILE]: the CPU backend measured for the time
// model (docs/time.md, "Calibration"), as JSON kind "calibration" to --out (written whole or not at all) or
// standard output, with a summary on standard error.
#include <iostream>
#include <memory>

#include <fmt/format.h>

#include "bench_modes.hpp"
#include "exit_codes.hpp"
#include "option_flags.hpp"
#include "out_file.hpp"
#include "smelt/bench_calibrate.hpp"
#include "smelt/detail/excerpt.hpp"
#include "smelt/detail/violations.hpp"
#include "smelt/file_io.hpp"
#include "table.hpp"

namespace smelt::cli {
namespace {

struct CalibrateArgs {
  OutFile out;
  std::unique_ptr<OptionFlags<CalibrateOptions>> options;
};

int run(const CalibrateArgs& args) {
  detail::Violations errors;
  CalibrateOptions o;
  args.options->apply(o, errors);
  args.out.check(errors);
  errors.throw_if_any();
  const Calibration cal = calibrate_cpu(o);  // checks the repetitions' bounds before it measures
  const std::string json = calibration_json(cal);
  if (args.out.given())
    write_text_file(args.out.path, json);
  else
    std::cout << json;
  const GemmTable& t = cal.gemm;
  std::cerr << fmt::format(
      "calibrated {}: {} GEMM shapes, {}/s at best ({}/s at 64 x 64 x 64), bandwidth {:.3g} GB/s, op overhead "
      "{:.3g} us{}\n",
      cal.device, t.flops_per_second.size(), human(cal.hardware.peak_flops_fp32, Unit::flops),
      human(t.rate(64, 64, 64), Unit::flops), cal.memory_bandwidth / 1e9, cal.op_overhead * 1e6,
      args.out.given() ? fmt::format("; written to {0} (use it as --hardware {0})", detail::one_line(args.out.path))
                       : "");
  return kOk;
}

}  // namespace

Run add_bench_calibrate(CLI::App& bench) {
  auto a = std::make_shared<CalibrateArgs>();
  auto* sub = bench.add_subcommand(
      "calibrate",
      "Measure the CPU backend for the time model (GEMM rates over a grid of shapes, bandwidth, op overhead): JSON "
      "kind calibration, usable as --hardware FILE (docs/time.md)");
  a->options = std::make_unique<OptionFlags<CalibrateOptions>>(sub);
  add_out_file(sub, a->out, "Write the calibration to FILE (whole or not at all)");
  return [a] { return run(*a); };
}

}  // namespace smelt::cli
