// smelt-match export CONFIG --to hf|megatron|executorch [--family F] [--out FILE]: the
// config as a training framework reads it (docs/export.md).
#include <iostream>
#include <memory>

#include <fmt/format.h>

#include "commands.hpp"
#include "exit_codes.hpp"
#include "out_file.hpp"
#include "smelt/config_io.hpp"
#include "smelt/detail/excerpt.hpp"
#include "smelt/detail/violations.hpp"
#include "smelt/error.hpp"
#include "smelt/export.hpp"
#include "smelt/file_io.hpp"
#include "table.hpp"

namespace smelt::cli {
namespace {

struct ExportArgs {
  std::string config;
  std::string to;
  std::string family;
  OutFile out;
};

// The config and the family its file names, from one read (standard input
// cannot be read twice), with read_config's context on every error.
std::pair<ModelConfig, std::string> read_with_family(const std::string& path) {
  const std::string source = source_name(path);
  const std::string where = fmt::format("while reading config '{}'", source);
  try {
    const std::string text = read_text_file(path);
    ModelConfig config = parse_config(text, source);
    return {std::move(config), hf_family_of(text, source)};
  } catch (const config_error& e) {
    detail::throw_within(where, e.violations());
  } catch (const io_error& e) {
    throw io_error(fmt::format("{}: {}", where, e.what()));
  }
}

int run_export(const ExportArgs& args) {
  detail::Violations errors;
  args.out.check(errors);
  errors.throw_if_any();
  if (args.to != "hf" && !args.family.empty())
    throw config_error(Violation("export_hf::family", fmt::format("\"{}\"", args.family),
                                 "applies to a Hugging Face export only (--to hf)"));
  const auto [config, source_family] = read_with_family(args.config);
  const std::string text = args.to == "hf" ? export_hf(config, args.family.empty() ? source_family : args.family)
                           : args.to == "executorch" ? export_executorch(config)
                                                     : export_megatron(config).text();
  if (!args.out.given()) {
    std::cout << text;
  } else {
    write_text_file(args.out.path, text);
    std::cerr << fmt::format("smelt-match: wrote '{}' as {} to {}\n", shown_name(config.name),
                             args.to == "hf"           ? "a Hugging Face config.json"
                             : args.to == "executorch" ? "an ExecuTorch params.json"
                                                       : "Megatron-LM arguments",
                             detail::one_line(args.out.path));
  }
  return kOk;
}

}  // namespace

Run add_export(CLI::App& app) {
  auto args = std::make_shared<ExportArgs>();
  auto* sub = app.add_subcommand("export",
                                 "Write a config as a training framework reads it: a Hugging Face "
                                 "config.json (with a loop block) or Megatron-LM arguments");
  sub->add_option("CONFIG", args->config, "Model config: smelt native JSON or Hugging Face config.json")->required();
  sub->add_option("--to", args->to,
                  "Target: hf (config.json), megatron (pretrain_gpt.py arguments) or executorch (Llama "
                  "params.json with block_repeat_config)")
      ->required()
      ->check(CLI::IsMember({"hf", "megatron", "executorch"}));
  sub->add_option("--family", args->family,
                  "Hugging Face model_type to write (--to hf); default: the config's own for a config.json, "
                  "else the first family that expresses it (docs/export.md)");
  add_out_file(sub, args->out, "Write to FILE (atomically) instead of standard output");
  return [args] { return run_export(*args); };
}

}  // namespace smelt::cli
