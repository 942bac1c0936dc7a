// The shared helpers of src/util/: enum word tables, CSV, parallel_for,
// median, and the config JSON value the reports embed.
#include <atomic>
#include <stdexcept>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "config/native_json.hpp"
#include "smelt/config_io.hpp"
#include "smelt/error.hpp"
#include "smelt/solve.hpp"
#include "test_configs.hpp"
#include "util/csv.hpp"
#include "util/enum_names.hpp"
#include "util/median.hpp"
#include "util/parallel_for.hpp"

using namespace smelt;

namespace {
enum class Colour { red, green, blue };
constexpr detail::EnumNames<Colour, 3> kColours{
    {{Colour::red, "red"}, {Colour::green, "green"}, {Colour::blue, "blue"}}};
}  // namespace

TEST_CASE("an enum table turns words into values and back", "[util]") {
  CHECK(detail::name_of(kColours, Colour::green) == "green");
  CHECK(detail::name_of(kColours, static_cast<Colour>(7)) == "?");
  CHECK(detail::parse_of(kColours, "blue", "colour") == Colour::blue);
  CHECK_THROWS_WITH(detail::parse_of(kColours, "Blue", "paint.colour"),
                    "paint.colour = \"Blue\": must be one of red, green, blue");
}

TEST_CASE("a bad enum word is echoed cut to 60 bytes for every enum", "[util]") {
  // parse_budget and parse_ffn_scaling once echoed the whole word: a 100 kB
  // --match value made a 100 kB message.
  const std::string word(100'000, 'x');
  const std::string shown = std::string(60, 'x') + "...";
  CHECK_THROWS_WITH(parse_budget(word, "MatchOptions::match"),
                    "MatchOptions::match = \"" + shown + "\": must be one of flops, params, kv, memory, time");
  CHECK_THROWS_WITH(parse_ffn_scaling(word, "SearchSpace::ffn"),
                    "SearchSpace::ffn = \"" + shown + "\": must be one of proportional, fixed, searched");
}

TEST_CASE("CSV fields are quoted only where they need it", "[util]") {
  CHECK(detail::csv_field("4-9") == "4-9");
  CHECK(detail::csv_field("a,b") == "\"a,b\"");
  CHECK(detail::csv_field("say \"hi\"") == "\"say \"\"hi\"\"\"");
  CHECK(detail::csv_field("two\nlines") == "\"two\nlines\"");
  CHECK(detail::csv_field("cr\r") == "\"cr\r\"");
  CHECK(detail::csv_record({"x", "1,5", ""}) == "x,\"1,5\",\n");
}

TEST_CASE("CSV reads back what it writes with quotes and commas and line breaks", "[util]") {
  const std::vector<std::string> fields{"plain", "a,b", "say \"hi\"", "two\nlines"};
  const auto records = detail::read_csv("h1,h2,h3,h4\n" + detail::csv_record(fields), "t.csv");
  REQUIRE(records.size() == 2);
  CHECK(records[1] == fields);
  // Unquoted fields are trimmed, blank lines skipped, a missing final newline accepted.
  CHECK(detail::read_csv(" a ,\tb\r\n\n\nc,d", "t.csv") ==
        std::vector<std::vector<std::string>>{{"a", "b"}, {"c", "d"}});
  CHECK_THROWS_WITH(detail::read_csv("a\n\"open", "t.csv"), "t.csv:2: unterminated quoted field");
  CHECK_THROWS_WITH(detail::read_csv("\"a\"b,c\n", "t.csv"), "t.csv:1: text after a closing quote");
}

TEST_CASE("parallel_for visits every index once on any thread count", "[util]") {
  for (const std::size_t threads : {0u, 1u, 3u, 64u}) {
    std::vector<std::atomic<int>> seen(1000);
    detail::parallel_for(seen.size(), threads, [&](std::size_t i) { ++seen[i]; });
    for (const auto& s : seen) CHECK(s == 1);
  }
  detail::parallel_for(0, 4, [](std::size_t) { throw std::logic_error("no index to run"); });
}

TEST_CASE("parallel_for rethrows a failure after every thread has finished", "[util]") {
  std::atomic<int> ran{0};
  CHECK_THROWS_WITH(detail::parallel_for(100, 4,
                                         [&](std::size_t i) {
                                           ++ran;
                                           if (i == 10) throw config_error("index 10 failed");
                                         }),
                    "index 10 failed");
  CHECK(ran >= 11);   // indices 0 to 10 started (one index at a time, in order)
  CHECK(ran <= 100);  // and no index ran twice
}

TEST_CASE("median of timings", "[util]") {
  CHECK(detail::median({3, 1, 2}) == 2);
  CHECK(detail::median({4, 1, 3, 2}) == 2.5);  // (2 + 3) / 2
  CHECK(detail::median({}) == 0);
}

TEST_CASE("the config JSON value the reports embed is the native JSON to_json writes", "[util]") {
  for (const ModelConfig& c : {test::tiny_moe(), test::mixtral_8x7b(), test::tiny_dense(3)}) {
    const nlohmann::ordered_json j = config_detail::config_json(c);
    CHECK(j.dump(2) + "\n" == to_json(c));
    CHECK(j == nlohmann::ordered_json::parse(to_json(c)));
  }
}
