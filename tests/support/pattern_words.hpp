#pragma once
// examples/tiny-moe.json with `n` copies of `"word",` ahead of its one attention pattern entry: a long list of good
// ("full") or bad ("bad!") words for the native reader (tests/unit/util/readers_alloc_test.cpp counts what it
// allocates, benchmarks/readers_bench.cpp times it).
#include <string>

#include "smelt/file_io.hpp"

namespace smelt::test {

inline std::string with_pattern_words(const std::string& word, int n) {
  std::string text = read_text_file(SMELT_SOURCE_DIR "/examples/tiny-moe.json");
  const std::string one = "\"pattern\": [\n      \"full\"\n    ]";
  std::string words;
  for (int i = 0; i < n; ++i) words += "\"" + word + "\",";
  text.replace(text.find(one), one.size(), "\"pattern\": [" + words + "\"full\"]");
  return text;
}

}  // namespace smelt::test
