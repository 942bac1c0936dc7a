// What a reader allocates for a long list of bad words: past the cap of listed violations (kMaxViolations) a bad
// word is counted, not written, so it allocates no more than a good word does. Counted with this program's own
// global operator new (a program of its own: the rest of the suite keeps the standard one). The time it saves is
// measured by benchmarks/readers_bench.cpp.
#include <atomic>
#include <cstdlib>
#include <new>
#include <string>

#include <catch2/catch.hpp>

#include "pattern_words.hpp"
#include "smelt/config_io.hpp"
#include "smelt/detail/violations.hpp"
#include "smelt/error.hpp"

namespace {
std::atomic<long> allocations{0};
}  // namespace

void* operator new(std::size_t size) {
  allocations.fetch_add(1, std::memory_order_relaxed);
  if (void* p = std::malloc(size == 0 ? 1 : size)) return p;
  throw std::bad_alloc();
}
void* operator new[](std::size_t size) { return operator new(size); }
// Every form a program's new may take and free through delete (Catch2 allocates with nothrow): one allocator for all.
void* operator new(std::size_t size, const std::nothrow_t&) noexcept {
  allocations.fetch_add(1, std::memory_order_relaxed);
  return std::malloc(size == 0 ? 1 : size);
}
void* operator new[](std::size_t size, const std::nothrow_t& tag) noexcept { return operator new(size, tag); }
void operator delete(void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }

namespace {

// Allocations while reading `text`, and the violations its error lists.
std::pair<long, std::size_t> read_counting(const std::string& text) {
  const long before = allocations.load();
  std::size_t listed = 0;
  try {
    (void)smelt::parse_native_config(text, "words.json");
  } catch (const smelt::config_error& e) {
    listed = e.violations().size();
  }
  return {allocations.load() - before, listed};
}

}  // namespace

TEST_CASE("past the cap of listed violations a bad word allocates nothing more than a good one", "[readers]") {
  // 4,000 and 8,000 words, good ("full") and bad ("bad!"): the 4,000 words more cost the JSON parser one
  // allocation each for both (nlohmann::json holds a string element on the heap), measured 4,003 for good words,
  // 4,002 for bad; a bad word past the first 100 adds nothing of its own.
  using smelt::test::with_pattern_words;
  const std::string good4 = with_pattern_words("full", 4'000), good8 = with_pattern_words("full", 8'000);
  const std::string bad4 = with_pattern_words("bad!", 4'000), bad8 = with_pattern_words("bad!", 8'000);
  const auto [g4, good4_listed] = read_counting(good4);
  const auto [g8, good8_listed] = read_counting(good8);
  const auto [b4, bad4_listed] = read_counting(bad4);
  const auto [b8, bad8_listed] = read_counting(bad8);
  // Good words break one rule ("attention.pattern has 4001 entries: must have at most num_layers = 4"); bad ones
  // list the first 100 and one line saying how many more.
  CHECK(good4_listed == 1);
  CHECK(good8_listed == 1);
  CHECK(bad4_listed == smelt::detail::kMaxViolations + 1);
  CHECK(bad8_listed == smelt::detail::kMaxViolations + 1);
  INFO("good: " << g4 << " then " << g8 << " allocations; bad: " << b4 << " then " << b8);
  // Building a message for each of the 3,900 or 7,900 dropped ones would be several allocations a word.
  CHECK(b8 - b4 <= g8 - g4);
}
