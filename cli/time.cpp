// smelt-match time CONFIG --hardware NAME|FILE [layout flags]: the predicted
// time of a training step and of a decode step (docs/time.md).
#include <algorithm>
#include <iostream>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "commands.hpp"
#include "exit_codes.hpp"
#include "option_flags.hpp"
#include "smelt/calibration.hpp"
#include "smelt/config_io.hpp"
#include "smelt/detail/violations.hpp"
#include "smelt/hardware.hpp"
#include "smelt/time.hpp"
#include "smelt/time_report.hpp"
#include "time_text.hpp"

namespace smelt::cli {
namespace {

struct TimeArgs {
  std::string config;
  std::string hardware;
  std::string calibration;
  bool json = false;
  std::unique_ptr<OptionFlags<MemoryLayout>> layout;
  std::unique_ptr<OptionFlags<TimeOptions>> options;
};

int run(const TimeArgs& args) {
  detail::Violations errors;
  MemoryLayout layout;
  TimeOptions options;
  args.layout->apply(layout, errors);
  args.options->apply(options, errors);
  errors.throw_if_any();
  const HardwareSpec hw = calibrated_hardware_spec(args.hardware, args.calibration);
  const TimeReport report = step_time(read_checked_config(args.config), layout, hw, options);
  std::cout << (args.json ? time_report_json(report) : time_text(report));
  return kOk;
}

}  // namespace

Run add_time(CLI::App& app) {
  auto a = std::make_shared<TimeArgs>();
  auto* sub = app.add_subcommand("time",
                                 "Predicted seconds per token of a training step and of decoding, op by op, on a "
                                 "device under a parallel layout (docs/time.md)");
  sub->add_option("CONFIG", a->config, "Model config: smelt native JSON or Hugging Face config.json")->required();
  sub->add_option(
         "--hardware", a->hardware,
         fmt::format("Device: {} (data/hardware), or a spec file of that schema", fmt::join(hardware_names(), ", ")))
      ->required();
  sub->add_option("--calibration", a->calibration,
                  "A calibration of the device's backend (bench --calibrate): its GEMM rates replace the spec's "
                  "efficiencies");
  a->layout =
      std::make_unique<OptionFlags<MemoryLayout>>(sub, std::vector<std::string_view>{"convention", "device_memory"});
  a->options = std::make_unique<OptionFlags<TimeOptions>>(sub);
  sub->add_flag("--json", a->json, "Print ordered JSON (every op) instead of text");
  return [a] { return run(*a); };
}

}  // namespace smelt::cli
