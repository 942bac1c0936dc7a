#include "out_file.hpp"

#include <fmt/format.h>

namespace smelt::cli {

void OutFile::check(detail::Violations& errors) const {
  if (given() && path.find_first_not_of(" \t") == std::string::npos)
    errors.add(fmt::format("--out = \"{}\": must name a file", path));
}

void add_out_file(CLI::App* sub, OutFile& out, const std::string& help) {
  out.option = sub->add_option("--out", out.path, help);
}

}  // namespace smelt::cli
