// smelt-match convert CONFIG [--out FILE]: any supported config as canonical
// native JSON (Hugging Face import included).
#include <iostream>
#include <memory>

#include <fmt/format.h>

#include "commands.hpp"
#include "exit_codes.hpp"
#include "out_file.hpp"
#include "smelt/config_io.hpp"
#include "smelt/detail/excerpt.hpp"
#include "smelt/detail/violations.hpp"
#include "smelt/file_io.hpp"
#include "table.hpp"

namespace smelt::cli {
namespace {

struct ConvertArgs {
  std::string config;
  OutFile out;
  std::string name;
};

int run_convert(const ConvertArgs& args) {
  detail::Violations errors;
  args.out.check(errors);
  errors.throw_if_any();
  ModelConfig config = read_config(args.config);
  if (!args.name.empty()) config.name = args.name;
  const std::string text = to_json(config);
  if (!args.out.given()) {
    std::cout << text;
  } else {
    write_text_file(args.out.path, text);
    std::cerr << fmt::format("smelt-match: wrote '{}' as native JSON to {}\n", shown_name(config.name),
                             detail::one_line(args.out.path));
  }
  return kOk;
}

}  // namespace

Run add_convert(CLI::App& app) {
  auto args = std::make_shared<ConvertArgs>();
  auto* sub = app.add_subcommand("convert", "Print a config (native or Hugging Face) as canonical native JSON");
  sub->add_option("CONFIG", args->config, "Model config: smelt native JSON or Hugging Face config.json")->required();
  add_out_file(sub, args->out, "Write to FILE (atomically) instead of standard output");
  sub->add_option("--name", args->name, "Set the model name");
  return [args] { return run_convert(*args); };
}

}  // namespace smelt::cli
