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
std::int64_t Shard::of(const anatomy::Saved& saved) const {
  std::int64_t one = 0;
  switch (saved.spread) {
    case anatomy::Spread::replicated:
      one = replicated(saved.elements, saved.bytes);
      break;
    case anatomy::Spread::sharded:
      one = sharded(saved.elements, saved.bytes);
      break;
    case anatomy::Spread::expert:
      one = expert(saved.elements, saved.bytes);
      break;
    case anatomy::Spread::positional:
      one = positional(saved.elements, saved.bytes);
      break;
  }
  return saved.count == 1 ? one : detail::mul(one, saved.count, "activation bytes");
}

}  // namespace smelt::memory_detail
