#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "smelt/config_io.hpp"
#include "smelt/detail/excerpt.hpp"
#include "smelt/detail/violations.hpp"
#include "smelt/error.hpp"
#include "smelt/file_io.hpp"

// json_excerpt lives in the library's private reader header.
namespace smelt::detail {
std::string json_excerpt(const nlohmann::json& value);
}

namespace {
std::string repeat(const std::string& s, int n) {
  std::string out;
  for (int i = 0; i < n; ++i) out += s;
  return out;
}
}  // namespace

TEST_CASE("an echoed value is cut to its first 60 bytes and an ellipsis", "[readers]") {
  using smelt::detail::excerpt;
  using smelt::detail::json_excerpt;
  CHECK(excerpt("short") == "short");
  CHECK(excerpt(repeat("a", 60)) == repeat("a", 60));
  CHECK(excerpt(repeat("a", 61)) == repeat("a", 60) + "...");
  // "a" then 40 two-byte characters: byte 60 is inside the 30th, so the cut backs up to byte 59.
  CHECK(excerpt("a" + repeat("\xC3\xA9", 40)) == "a" + repeat("\xC3\xA9", 29) + "...");
  CHECK(json_excerpt(nlohmann::json::parse(R"({"a":[1,2],"b":"x"})")) == R"({"a":[1,2],"b":"x"})");
  // A quote and 59 letters of a 1 MiB string; "[1,1,...": "[" and 29 times "1," and "1" are 60 bytes.
  CHECK(json_excerpt(std::string(1 << 20, 'y')) == "\"" + repeat("y", 59) + "...");
  CHECK(json_excerpt(nlohmann::json(std::vector<int>(100000, 1))) == "[" + repeat("1,", 29) + "1...");
}

TEST_CASE("a name shown in text stays on one line: control characters and line separators escaped", "[readers]") {
  using smelt::detail::name_excerpt;
  // A config's name once printed raw: a newline began a line of its own ("smelt-match: wrote ...") and an escape
  // sequence reached the terminal.
  CHECK(name_excerpt("tiny\nsmelt-match: wrote x\x1b[31m") == "tiny\\x0asmelt-match: wrote x\\x1b[31m");
  CHECK(name_excerpt("a\rb\x7f\xc2\x85\xe2\x80\xa8") == "a\\x0db\\x7f\\u0085\\u2028");
  CHECK(name_excerpt("caf\xc3\xa9 \\ ok") == "caf\xc3\xa9 \\ ok");
  // Escaped, then cut: 100 newlines are 400 bytes escaped, of which 64 are shown, with the name's own length.
  CHECK(name_excerpt(std::string(100, '\n')) == repeat("\\x0a", 16) + "... (100 bytes)");
}

TEST_CASE("one input reports at most 100 violations and then says more were found", "[readers]") {
  // 150 layers that are not integers: 150 violations, of which the first 100 are listed.
  std::string layers = "[" + repeat("\"x\",", 149) + "\"x\"]";
  const std::string text = R"({"schema_version": 1, "vocab_size": 1000, "num_layers": 4, "hidden_size": 64,
    "attention": {"num_heads": 4, "num_kv_heads": 2, "head_dim": 16},
    "moe": {"num_experts": 8, "top_k": 2, "expert_width": 32, "layers": )" +
                           layers + "}}";
  try {
    smelt::parse_native_config(text, "many.json");
    FAIL("no error");
  } catch (const smelt::config_error& e) {
    REQUIRE(e.violations().size() >= 101);
    CHECK(e.violations()[0].text() == "moe.layers[0] = \"x\": must be an integer");
    CHECK(e.violations()[99].text() == "moe.layers[99] = \"x\": must be an integer");
    CHECK(e.violations()[100].text() == "(more violations after the first 100 are not listed)");
  }
}

TEST_CASE("past the cap a violation is counted without its message, and good words still read", "[readers]") {
  smelt::detail::Violations v;
  for (int i = 0; i < 100; ++i) v.add("x", "1", "bad");
  CHECK(!v.full());  // the 101st still writes the closing line
  v.add("x", "1", "bad");
  CHECK(v.full());
  v.count_unlisted();
  CHECK(v.size() == 102);         // every violation counted
  CHECK(v.list().size() == 101);  // 100 listed and the line after them
  // 150 bad words, then "sliding" and "full" past the cap, then 50 non-strings: the list is the first 100.
  const std::string pattern = "[" + repeat("\"x\",", 150) + "\"sliding\", \"full\"," + repeat("1,", 49) + "1]";
  const std::string text = R"({"schema_version": 1, "vocab_size": 1000, "num_layers": 4, "hidden_size": 64,
    "attention": {"num_heads": 4, "num_kv_heads": 2, "head_dim": 16, "window": 8, "pattern": )" +
                           pattern + "}}";
  try {
    smelt::parse_native_config(text, "words.json");
    FAIL("no error");
  } catch (const smelt::config_error& e) {
    REQUIRE(e.violations().size() == 101);
    CHECK(e.violations()[0].text() == "attention.pattern[0] = \"x\": must be one of full, sliding, chunked");
    CHECK(e.violations()[99].text() == "attention.pattern[99] = \"x\": must be one of full, sliding, chunked");
    CHECK(e.violations()[100].text() == "(more violations after the first 100 are not listed)");
  }
  // Under the cap each kind of bad entry keeps its own message (tiny-moe with a pattern of three entries).
  std::string few = smelt::read_text_file(SMELT_SOURCE_DIR "/examples/tiny-moe.json");
  const std::string one = "\"pattern\": [\n      \"full\"\n    ]";
  REQUIRE(few.find(one) != std::string::npos);
  few.replace(few.find(one), one.size(), R"("pattern": ["full", 3, "Full"])");
  try {
    smelt::parse_native_config(few, "few.json");
    FAIL("no error");
  } catch (const smelt::config_error& e) {
    CHECK(e.lines() == std::vector<std::string>{"attention.pattern[1] = 3: must be a string",
                                                "attention.pattern[2] = \"Full\": must be one of full, sliding, "
                                                "chunked"});
  }
}

TEST_CASE("a syntax error quotes at most 60 bytes of the token it stopped in", "[readers]") {
  // An unterminated 1 MiB string: nlohmann quotes the whole token read so far.
  const std::string text = "{\"name\": \"" + std::string(1 << 20, 'z');
  try {
    smelt::parse_native_config(text, "open.json");
    FAIL("no error");
  } catch (const smelt::config_error& e) {
    CHECK(std::string(e.what()) ==
          "open.json:1:1048587: malformed JSON: syntax error while parsing value - invalid string: missing closing "
          "quote; last read: '\"" +
              repeat("z", 59) + "...'");
  }
}

TEST_CASE("text over the input limit is refused before parsing", "[readers]") {
  const std::string text(smelt::kMaxInputBytes + 1, ' ');
  CHECK_THROWS_WITH(smelt::parse_native_config(text, "huge.json"),
                    "huge.json: 67108865 bytes of JSON: more than the 64 MiB (67108864 bytes) input limit");
}
