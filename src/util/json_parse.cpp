// The one JSON parser every reader goes through, with the bounds that keep a
// hostile file from crashing it: nesting depth (nlohmann's dump(), copy and
// comparison recurse once per level, so 100k levels overflow the stack), input
// size, the count of values (memory), and numbers beyond a double. Every failure is a config_error naming
// SOURCE:LINE:COLUMN.
#include <algorithm>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "smelt/detail/excerpt.hpp"
#include "smelt/error.hpp"
#include "smelt/file_io.hpp"
#include "util/json_reader.hpp"

namespace smelt::detail {
namespace {

using nlohmann::json;

struct Where {
  std::size_t line = 1;
  std::size_t column = 1;
};

Where where(std::string_view text, std::size_t at) {
  Where w;
  at = std::min(at, text.size());
  for (std::size_t i = 0; i < at; ++i) {
    if (text[i] == '\n') {
      ++w.line;
      w.column = 1;
    } else {
      ++w.column;
    }
  }
  return w;
}

// Byte offset of the bracket that opens level `depth + 1`. Only called once the
// parser has read the text up to that bracket, so the text before it is valid
// JSON and string tracking is exact.
std::size_t offset_beyond_depth(std::string_view text, std::size_t depth) {
  std::size_t level = 0;
  bool in_string = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\')
        ++i;
      else if (c == '"')
        in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++level > depth) return i;
    } else if (c == ']' || c == '}') {
      --level;
    }
  }
  return text.size();
}

// nlohmann's DOM builder with a depth bound and a record of where the parse
// failed. nlohmann's own parser is iterative (no recursion while reading);
// its callback API gets the depth but not the position, and its parse_error
// exception for an overflowing number (out_of_range 406) carries neither, so
// the SAX interface is the one place that sees both.
class BoundedSax {
 public:
  using dom = nlohmann::detail::json_sax_dom_parser<json>;

  explicit BoundedSax(json& result) : dom_(result, true) {}

  bool null() { return element() && dom_.null(); }
  bool boolean(bool v) { return element() && dom_.boolean(v); }
  bool number_integer(json::number_integer_t v) { return element() && dom_.number_integer(v); }
  bool number_unsigned(json::number_unsigned_t v) { return element() && dom_.number_unsigned(v); }
  bool number_float(json::number_float_t v, const json::string_t& s) { return element() && dom_.number_float(v, s); }
  bool string(json::string_t& v) { return element() && dom_.string(v); }
  bool binary(json::binary_t& v) { return element() && dom_.binary(v); }
  bool start_object(std::size_t n) { return open(false) && dom_.start_object(n); }
  bool start_array(std::size_t n) { return open(true) && dom_.start_array(n); }
  bool end_object() { return close() && dom_.end_object(); }
  bool end_array() { return close() && dom_.end_array(); }
  bool key(json::string_t& k) {
    frames_.back().key = excerpt(k);
    return dom_.key(k);
  }
  bool parse_error(std::size_t position, const std::string& token, const nlohmann::detail::exception& e) {
    error_position = position;
    error_token = token;
    error_id = e.id;
    error_what = e.what();
    return false;
  }

  // The JSON path of the value being read ("vocab_size", "laws[0].params.E").
  std::string pending_path() const {
    std::string path;
    for (std::size_t i = 0; i < frames_.size(); ++i) {
      const Frame& f = frames_[i];
      if (f.array)
        path += fmt::format("[{}]", i + 1 == frames_.size() ? f.count : f.count - 1);
      else
        path += path.empty() ? f.key : "." + f.key;
    }
    return path;
  }

  bool too_deep = false, too_many = false;
  std::size_t error_position = 0;
  std::string error_token, error_what;
  int error_id = 0;

 private:
  struct Frame {
    bool array = false;
    std::size_t count = 0;  // elements started so far (arrays)
    std::string key;        // the current key, cut (objects)
  };

  bool element() {
    if (!frames_.empty() && frames_.back().array) ++frames_.back().count;
    if (++values_ > kMaxJsonValues) return too_many = true, false;
    return true;
  }
  bool open(bool array) {
    if (!element()) return false;
    if (frames_.size() >= kMaxJsonDepth) return too_deep = true, false;
    frames_.push_back({array, 0, {}});
    return true;
  }
  bool close() {
    frames_.pop_back();
    return true;
  }

  dom dom_;
  std::vector<Frame> frames_;
  std::size_t values_ = 0;
};

// nlohmann's explanation without its "[json.exception...] parse error at ...: "
// prefix, and with the token it quotes cut (it can be a whole 60 MB string).
std::string explanation(const std::string& what) {
  std::string out = what;
  const auto syntax = out.find(": syntax error");
  if (syntax != std::string::npos) out = out.substr(syntax + 2);
  static constexpr std::string_view kLastRead = "; last read: '";
  const auto token = out.find(kLastRead);
  if (token == std::string::npos) return out;
  const std::size_t from = token + kLastRead.size();
  auto to = out.rfind("'; expected");
  if (to == std::string::npos || to < from) to = out.size() - 1;
  return out.substr(0, from) + excerpt(std::string_view(out).substr(from, to - from)) + out.substr(to);
}

}  // namespace

nlohmann::json parse_json_text(std::string_view text, std::string_view source) {
  if (text.size() > kMaxInputBytes)
    throw config_error(fmt::format("{}: {} bytes of JSON: more than the {} MiB ({} bytes) input limit", source,
                                   text.size(), kMaxInputBytes >> 20, kMaxInputBytes));
  json result;
  BoundedSax sax(result);
  if (json::sax_parse(text.begin(), text.end(), &sax)) return result;
  if (sax.too_deep) {
    const Where w = where(text, offset_beyond_depth(text, kMaxJsonDepth));
    throw config_error(fmt::format("{}:{}:{}: JSON nested deeper than {} levels (the limit on input)", source, w.line,
                                   w.column, kMaxJsonDepth));
  }
  if (sax.too_many)
    throw config_error(fmt::format("{}: more than {} JSON values (the limit on input)", source, kMaxJsonValues));
  if (sax.error_id == 406) {  // a number beyond a double: point at its first digit
    const std::size_t at =
        sax.error_position >= sax.error_token.size() ? sax.error_position - sax.error_token.size() : 0;
    const Where w = where(text, at);
    const std::string path = sax.pending_path();
    throw config_error(fmt::format("{}:{}:{}: {}{}: must be a number a double can hold (magnitude below 1.8e308)",
                                   source, w.line, w.column, path.empty() ? "" : path + " = ",
                                   excerpt(sax.error_token)));
  }
  // nlohmann gives a byte offset (1-based, one past the offending byte).
  const Where w = where(text, sax.error_position > 0 ? sax.error_position - 1 : 0);
  throw config_error(
      fmt::format("{}:{}:{}: malformed JSON: {}", source, w.line, w.column, explanation(sax.error_what)));
}

void check_json_text(std::string_view text, std::string_view source) { (void)parse_json_text(text, source); }

}  // namespace smelt::detail
