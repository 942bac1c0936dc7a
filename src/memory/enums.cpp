// The word forms of the memory enums, a device's capacity, and MemoryPart's sum.
#include <cctype>
#include <charconv>
#include <cmath>
#include <string>

#include <fmt/format.h>

#include "smelt/detail/excerpt.hpp"
#include "smelt/error.hpp"
#include "smelt/memory.hpp"
#include "util/checked.hpp"
#include "util/enum_names.hpp"

namespace smelt {
namespace {

constexpr detail::EnumNames<Dtype, 4> kDtypes{
    {{Dtype::fp32, "fp32"}, {Dtype::bf16, "bf16"}, {Dtype::fp16, "fp16"}, {Dtype::automatic, "auto"}}};
constexpr detail::EnumNames<Recompute, 3> kRecompute{
    {{Recompute::none, "none"}, {Recompute::selective, "selective"}, {Recompute::full, "full"}}};
constexpr detail::EnumNames<MemoryConvention, 3> kConventions{{{MemoryConvention::smelt, "smelt"},
                                                               {MemoryConvention::korthikanti, "korthikanti"},
                                                               {MemoryConvention::megatron, "megatron"}}};

constexpr std::int64_t kGiB = std::int64_t{1} << 30;

// Nominal capacities (docs/memory.md, "Devices"): what the vendor sells the card as, in GiB.
struct NamedDevice {
  std::string_view name;
  std::int64_t gib;
};
constexpr NamedDevice kDevices[] = {{"h100", 80},    {"h200", 141},   {"b200", 180},
                                    {"a100-40", 40}, {"a100-80", 80}, {"mi300x", 192}};

// Units a capacity may carry, in bytes.
struct Unit {
  std::string_view word;
  double bytes;
};
constexpr Unit kUnits[] = {
    {"", 1},      {"B", 1},        {"KB", 1e3},        {"MB", 1e6},           {"GB", 1e9},
    {"TB", 1e12}, {"KiB", 1024.0}, {"MiB", 1048576.0}, {"GiB", 1073741824.0}, {"TiB", 1099511627776.0}};

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

}  // namespace

std::string_view to_string(Dtype v) { return detail::name_of(kDtypes, v); }
Dtype parse_dtype(std::string_view s, std::string_view field) { return detail::parse_of(kDtypes, s, field); }
std::int64_t bytes_of(Dtype v) { return v == Dtype::fp32 ? 4 : v == Dtype::automatic ? 0 : 2; }

std::string_view to_string(Recompute v) { return detail::name_of(kRecompute, v); }
Recompute parse_recompute(std::string_view s, std::string_view field) { return detail::parse_of(kRecompute, s, field); }

std::string_view to_string(MemoryConvention v) { return detail::name_of(kConventions, v); }
MemoryConvention parse_memory_convention(std::string_view s, std::string_view field) {
  return detail::parse_of(kConventions, s, field);
}

DeviceMemory parse_device_memory(std::string_view s, std::string_view field) {
  const std::string word = lower(s);
  std::string known;
  for (const NamedDevice& d : kDevices) {
    if (word == d.name) return {d.gib * kGiB, std::string(d.name)};
    known += fmt::format("{}{}", known.empty() ? "" : ", ", d.name);
  }
  const auto rule = [&] {
    return fmt::format("must be bytes with an optional unit (B, KB, MB, GB, TB, KiB, MiB, GiB, TiB), or one of {}",
                       known);
  };
  double value = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
  if (ec != std::errc() || end == s.data())
    throw config_error(Violation(std::string(field), fmt::format("\"{}\"", detail::excerpt(s)), rule()));
  const std::string_view unit(end, static_cast<std::size_t>(s.data() + s.size() - end));
  for (const Unit& u : kUnits)
    if (lower(unit) == lower(u.word)) {
      const double bytes = std::floor(value * u.bytes);
      if (!std::isfinite(value) || value < 0 || bytes > 9.0e18)
        throw config_error(Violation(std::string(field), fmt::format("\"{}\"", detail::excerpt(s)),
                                     "must be between 0 and 9e18 bytes"));
      return {static_cast<std::int64_t>(bytes), ""};
    }
  throw config_error(Violation(std::string(field), fmt::format("\"{}\"", detail::excerpt(s)), rule()));
}

void MemoryPart::add(std::string_view name, std::int64_t bytes) {
  total = detail::add(total, bytes, "memory bytes");
  for (MemoryTerm& t : terms)
    if (t.name == name) {
      t.bytes = detail::add(t.bytes, bytes, "memory bytes");
      return;
    }
  // Most parts hold a handful of terms: one allocation rather than a vector grown 1, 2, 4, 8.
  if (terms.capacity() == 0) terms.reserve(8);
  terms.push_back({name, bytes});
}

}  // namespace smelt
