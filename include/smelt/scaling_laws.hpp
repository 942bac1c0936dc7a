// Law files: the fitted laws as `smelt-match fit --out` writes them and
// `smelt-match frontier --law` reads them (docs/json-schema.md).
#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "smelt/scaling_fit.hpp"

namespace smelt {

// Law files: ordered JSON with schema_version and one entry per law.
std::string laws_to_json(const std::vector<Law>& laws);
std::vector<Law> read_laws(const std::filesystem::path& path);

namespace detail {

// read_laws on text already in memory (for the fuzz harnesses, the tests and
// the Python bindings); errors carry "while reading laws 'SOURCE'". In
// smelt::detail (include/smelt/violations.hpp says why).
std::vector<Law> parse_law_file(std::string_view text, const std::string& source);

}  // namespace detail

}  // namespace smelt
