// Shard: how the layout divides one micro-batch's activation terms.
#include "memory/activations.hpp"
#include "memory/division.hpp"
#include "util/checked.hpp"

namespace smelt::memory_detail {
namespace {
std::int64_t bytes_of(std::int64_t elements, std::int64_t per, std::int64_t split) {
  return detail::mul(ceil_div(elements, split), per, "activation bytes");
}
}  // namespace

std::int64_t Shard::replicated(std::int64_t elements, std::int64_t bytes) const {
  return bytes_of(elements, bytes, sp ? cp * tp : cp);
}
std::int64_t Shard::sharded(std::int64_t elements, std::int64_t bytes) const {
  return bytes_of(elements, bytes, cp * tp);
}
std::int64_t Shard::expert(std::int64_t elements, std::int64_t bytes) const {
  return bytes_of(elements, bytes, cp * etp);
}
std::int64_t Shard::positional(std::int64_t elements, std::int64_t bytes) const {
  return bytes_of(elements, bytes, cp);
}

}  // namespace smelt::memory_detail
