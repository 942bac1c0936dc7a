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

}  // namespace smelt
