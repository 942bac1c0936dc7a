// --out FILE, as every command that writes a file takes it: written whole or not
// at all (write_text_file). Given blank it is an error: it once printed to
// standard output, as if --out had not been given.
#pragma once

#include <string>

#include <CLI/CLI.hpp>

#include "smelt/detail/violations.hpp"

namespace smelt::cli {

struct OutFile {
  std::string path;
  const CLI::Option* option = nullptr;
  bool given() const { return option != nullptr && option->count() > 0; }
  // `--out = "": must name a file` where it was given blank.
  void check(detail::Violations& errors) const;
};

// Adds --out to `sub`, reading into `out`.
void add_out_file(CLI::App* sub, OutFile& out, const std::string& help);

}  // namespace smelt::cli
