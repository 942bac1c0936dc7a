// The library names its own fields in every message, never a command-line flag
// (the CLI translates, cli/flag_names.cpp), and its violations are structured.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "flag_names.hpp"
#include "smelt/bench.hpp"
#include "smelt/bench_backend.hpp"
#include "smelt/config_io.hpp"
#include "smelt/detail/scaling_text.hpp"
#include "smelt/detail/violations.hpp"
#include "smelt/error.hpp"
#include "smelt/scaling.hpp"
#include "smelt/scaling_laws.hpp"
#include "smelt/scaling_runs.hpp"
#include "smelt/solve.hpp"
#include "smelt/sweep.hpp"
#include "test_configs.hpp"
#include "util/checked.hpp"

using namespace smelt;

namespace {

ModelConfig example(const char* name) { return read_config(std::string(SMELT_SOURCE_DIR "/examples/") + name); }

// The message of the config_error `run` throws ("" when it throws none).
template <class Run>
std::string message_of(Run run) {
  try {
    run();
  } catch (const config_error& e) {
    return e.what();
  }
  return "";
}

// Every line of `message` is non-empty and names no flag.
void check_no_flags(const std::string& message) {
  INFO(message);
  CHECK_FALSE(message.empty());
  CHECK(message.find("--") == std::string::npos);
}

}  // namespace

TEST_CASE("a violation reads field = value: rule, field: rule, or its rule alone", "[errors]") {
  CHECK(Violation("SearchSpace::align_hidden", "0", "must be positive").text() ==
        "SearchSpace::align_hidden = 0: must be positive");
  CHECK(Violation("moe.top_k", "", "missing (required)").text() == "moe.top_k: missing (required)");
  CHECK(Violation("base.json:3:7: syntax error").text() == "base.json:3:7: syntax error");
  const config_error e({Violation("a", "1", "must be even"), Violation("no rows")});
  CHECK(std::string(e.what()) == "a = 1: must be even\nno rows");
  CHECK(e.lines() == std::vector<std::string>{"a = 1: must be even", "no rows"});
  CHECK(e.violations()[0].field == "a");
  CHECK(e.violations()[1].field.empty());
}

TEST_CASE("Violations collects, merges what a checked call threw, and throws all at once", "[errors]") {
  detail::Violations v;
  v.throw_if_any();  // nothing collected: no throw
  v.range("BenchOptions::warmup", -1, 0, 1000);
  v.range("BenchOptions::repetitions", 0, 1, 1000);
  v.range("BenchOptions::repetitions", 1001, 1, 1000);
  v.range("BenchOptions::repetitions", 20, 1, 1000);  // in range: nothing
  CHECK(v.collect([] { throw config_error(Violation("x", "2", "must be odd")); }) == false);
  CHECK(v.collect([] {}) == true);
  REQUIRE(v.size() == 4);
  try {
    v.throw_if_any();
    FAIL("no throw");
  } catch (const config_error& e) {
    CHECK(e.lines() == std::vector<std::string>{"BenchOptions::warmup = -1: must be at least 0",
                                                "BenchOptions::repetitions = 0: must be positive",
                                                "BenchOptions::repetitions = 1001: must be at most 1000",
                                                "x = 2: must be odd"});
  }
}

TEST_CASE("Violations lists the first 100, then one line saying more were found, and counts them all", "[errors]") {
  detail::Violations v;
  for (int i = 0; i < 150; ++i) v.add("f", std::to_string(i), "bad");
  // 150 added: 100 listed, the 101st replaced by the note, 49 more dropped; size() counts all 150.
  CHECK(v.size() == 150);
  REQUIRE(v.list().size() == 101);
  CHECK(v.list()[99].text() == "f = 99: bad");
  CHECK(v.list()[100].text() == "(more violations after the first 100 are not listed)");
  // Merging a full list keeps the cap: 100 listed before, so the merged ones add nothing listed.
  detail::Violations w;
  w.merge(config_error(v.list()));
  CHECK(w.size() == 101);
  CHECK(w.list() == v.list());
  const std::vector<Violation> taken = v.take();
  CHECK(taken.size() == 101);
  CHECK(v.empty());
  CHECK(v.size() == 0);
}

TEST_CASE("a law file lists at most 100 bad bootstrap samples, as every reader does", "[errors]") {
  // 150 samples of one number each, where chinchilla needs 5: 150 violations, 100 listed.
  std::string samples;
  for (int i = 0; i < 150; ++i) samples += i == 0 ? "[1]" : ",[1]";
  const std::string text = R"({"form": "chinchilla", "params": {"E": 1, "A": 2, "B": 3, "alpha": 0.3, "beta": 0.3},
    "bootstrap": [)" + samples +
                           "]}";
  try {
    detail::parse_law_file(text, "b.json");
    FAIL("no throw");
  } catch (const config_error& e) {
    // "while reading laws 'b.json':", then the 100 listed and the note, each indented.
    REQUIRE(e.violations().size() == 102);
    CHECK(e.violations()[100].text() == "  bootstrap[99] = [1]: must be an array of 5 numbers (E, A, B, alpha, beta)");
    CHECK(e.violations()[101].text() == "  (more violations after the first 100 are not listed)");
  }
}

TEST_CASE("context added on rethrow indents each violation and keeps its field", "[errors]") {
  try {
    detail::throw_within("while reading config 'b.json'",
                         {Violation("moe.top_k", "0", "must be positive"), Violation("b.json: no rows")});
    FAIL("no throw");
  } catch (const config_error& e) {
    CHECK(std::string(e.what()) ==
          "while reading config 'b.json':\n  moe.top_k = 0: must be positive\n  b.json: no rows");
    CHECK(e.violations()[1].field == "  moe.top_k");
  }
}

TEST_CASE("an overflow is bad input: an overflow_error and so a config_error", "[errors]") {
  try {
    (void)detail::mul(std::int64_t{1} << 40, std::int64_t{1} << 40, "test bytes");
    FAIL("no throw");
  } catch (const overflow_error& e) {
    CHECK(std::string(e.what()) == "test bytes overflows 64-bit integers");
    CHECK(dynamic_cast<const config_error*>(&e) != nullptr);
  }
}

TEST_CASE("solver option errors name SearchSpace, MatchOptions and LoopRecipe fields, never a flag", "[errors]") {
  const ModelConfig b = example("smelt-baseline-12l.json");
  const std::string all = message_of([&] {
    (void)solve(b, {.span = LoopSpan::layers(99, 100), .loops = 0, .residual_scale = -1.0, .depth = 0},
                {.hidden = KnobRange{7, 3},
                 .experts = KnobRange{0, 1},
                 .head_dim = KnobRange{3, 3},
                 .kv_heads = KnobRange{0, 2},
                 .heads = KnobRange{5, 1},
                 .align_hidden = 0,
                 .align_experts = 0,
                 .align_head_dim = 0,
                 .min_head_dim = 0,
                 .max_head_dim = 0,
                 .attention_ratio = {2, 1},
                 .align_ffn = 0,
                 .free_heads = false},
                {.match = {}, .contexts = {0}, .tolerance_pct = -1, .top = 0});
  });
  check_no_flags(all);
  for (const char* field :
       {"SearchSpace::align_hidden", "SearchSpace::align_experts", "SearchSpace::align_head_dim",
        "SearchSpace::min_head_dim", "SearchSpace::max_head_dim", "SearchSpace::attention_ratio",
        "SearchSpace::align_ffn", "SearchSpace::hidden", "SearchSpace::experts", "SearchSpace::heads",
        "SearchSpace::kv_heads", "MatchOptions::top", "MatchOptions::tolerance_pct", "MatchOptions::match",
        "MatchOptions::contexts", "LoopRecipe::depth", "LoopRecipe::loops", "LoopRecipe::residual_scale"}) {
    INFO(field);
    CHECK(all.find(field) != std::string::npos);
  }
  check_no_flags(message_of([] { (void)parse_loop_span("middle", "LoopRecipe::span"); }));
  check_no_flags(message_of([&] { (void)solve(b, {.span = LoopSpan::layers(4, 99)}); }));
  check_no_flags(message_of([&] { (void)solve(b, {.span = LoopSpan::of_fraction(1.5)}); }));
  check_no_flags(message_of([&] { (void)solve(b, {}, {.head_dim = KnobRange{8, 16}}); }));
  check_no_flags(message_of([&] { (void)solve(b, {}, {.hidden = KnobRange{1000, 1000}}); }));
  check_no_flags(message_of([&] { (void)solve(b, {}, {}, {.contexts = std::vector<std::int64_t>(65, 8)}); }));
  check_no_flags(message_of([&] { (void)solve(test::tiny_dense(4), {}, {.experts = KnobRange{8, 8}}); }));
  ModelConfig listed = b;
  listed.moe.layers = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};
  check_no_flags(message_of([&] { (void)solve(listed, {.depth = 10}); }));
}

TEST_CASE("the reasons a result misses the tolerance name SearchSpace and MatchOptions fields", "[errors]") {
  const ModelConfig b = example("smelt-baseline-12l.json");
  // In the attention box searched before the shape rules all three budgets miss.
  const MatchResult r =
      solve(b, {}, {.head_dim = KnobRange{32, 128}, .kv_heads = KnobRange{1, 2}, .free_heads = false});
  REQUIRE(r.why.size() == 3);
  for (const Message& line : r.why) check_no_flags(line.text);
  // An MLA Baseline keeps its attention: its KV reason says which budgets to match instead.
  const MatchResult mla = solve(example("deepseek-v3-mla.json"), {}, {}, {.top = 1});
  REQUIRE_FALSE(mla.why.empty());
  CHECK(mla.why[0].text.find("(MatchOptions::match = flops,params)") != std::string::npos);
  for (const Message& line : mla.why) check_no_flags(line.text);
  check_no_flags(message_of([] { (void)solve(example("deepseek-v3-mla.json"), {}, {.head_dim = KnobRange{64, 64}}); }));
}

TEST_CASE("sweep option errors name SweepOptions fields, never a flag", "[errors]") {
  const ModelConfig b = example("smelt-baseline-12l.json");
  SweepOptions o;
  o.spans = std::vector<double>(65, 0.5);
  o.spans.push_back(2);
  o.loops = {0, 2000};
  o.depths = {0, 0.01};
  const std::vector<Violation> v = sweep_violations(b, o);
  REQUIRE(v.size() == 6);
  for (const Violation& x : v) {
    check_no_flags(x.text());
    CHECK(x.field.rfind("SweepOptions::", 0) == 0);
  }
  ModelConfig listed = b;
  listed.moe.layers = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};
  check_no_flags(message_of([&] { (void)sweep(listed, {.spans = {0}, .loops = {2}, .depths = {0.5}}); }));
  check_no_flags(message_of([&] { (void)sweep(b, {.spans = {}, .loops = {}, .depths = {}}); }));
  check_no_flags(message_of([&] { (void)sweep(b, {.spans = {0.5}, .loops = {}, .depths = {}}); }));
}

TEST_CASE("bench option errors name BenchOptions fields, never a flag", "[errors]") {
  const ModelConfig c = test::tiny_moe();
  const std::string all =
      message_of([&] { (void)make_layer_plan(c, {.tokens = -4, .context = -1, .warmup = -1, .repetitions = 0}); });
  check_no_flags(all);
  for (const char* field :
       {"BenchOptions::tokens", "BenchOptions::context", "BenchOptions::warmup", "BenchOptions::repetitions"}) {
    INFO(field);
    CHECK(all.find(field) != std::string::npos);
  }
  check_no_flags(message_of([&] { (void)make_layer_plan(c, {.tokens = 12, .context = 8}); }));
  check_no_flags(message_of([&] { (void)make_layer_plan(c, {.context = 1 << 20}); }));
  check_no_flags(
      message_of([&] { (void)run_bench(c, {.backend = BenchBackendKind::cpu, .tokens = 1048576, .context = 8}); }));
  check_no_flags(message_of([&] { (void)run_bench(test::mixtral_8x7b(), {.backend = BenchBackendKind::cpu}); }));
}

TEST_CASE("runs and fit errors name no flag", "[errors]") {
  check_no_flags(message_of([] {
    (void)detail::parse_runs("N,D,loss\n1,2,3\n", "runs.csv", LawForm::chinchilla, "", {{"Model Size", "N"}});
  }));
  std::vector<Run> runs(2);
  check_no_flags(message_of([&] {
    (void)fit_law(runs, LawForm::chinchilla, {.huber_delta = -1, .bootstrap = -1, .threads = -1, .max_iterations = 0});
  }));
}

TEST_CASE("native JSON reports a rule on a field only when reading did not already report it", "[errors]") {
  // num_heads unreadable (reported by the reader, and then 0, which the rules
  // would report again); top_k readable but beyond the experts (a rule).
  const std::string text = R"({"schema_version": 1, "vocab_size": 100, "num_layers": 2, "hidden_size": 64,
    "attention": {"num_heads": "x", "num_kv_heads": 1, "head_dim": 16},
    "moe": {"num_experts": 4, "top_k": 8, "expert_width": 32}})";
  try {
    (void)parse_native_config(text, "t.json");
    FAIL("no throw");
  } catch (const config_error& e) {
    CHECK(e.lines() == std::vector<std::string>{"attention.num_heads = \"x\": must be an integer",
                                                "moe.top_k = 8: must be at most moe.num_experts = 4"});
    CHECK(e.violations()[0].field == "attention.num_heads");
    CHECK(e.violations()[1].field == "moe.top_k");
  }
}

TEST_CASE("relaxations name library fields, and smelt-match has a flag for each", "[errors]") {
  const ModelConfig b = example("smelt-baseline-12l.json");
  std::vector<Relaxation> all;
  // free_heads given: its default is not what this test is about.
  for (const SearchSpace& s :
       {SearchSpace{.head_dim = KnobRange{32, 128}, .kv_heads = KnobRange{1, 2}, .heads = KnobRange{10, 10}},
        SearchSpace{.free_heads = false, .ffn = FfnScaling::searched}}) {
    const MatchResult r = solve(b, {}, s, {.tolerance_pct = 0, .top = 1});  // misses whatever the defaults
    REQUIRE_FALSE(r.relaxations.empty());
    all.insert(all.end(), r.relaxations.begin(), r.relaxations.end());
  }
  std::size_t fields = 0;
  for (const Relaxation& x : all)
    for (const FieldChange& c : x.changes) {
      INFO(c.field << " = " << c.value);
      check_no_flags(c.field + " = " + c.value);
      CHECK((c.field.rfind("SearchSpace::", 0) == 0 || c.field.rfind("LoopRecipe::", 0) == 0));
      CHECK(cli::flag_of_field(c.field).rfind("--", 0) == 0);
      ++fields;
    }
  // align_hidden, align_experts, align_head_dim, head_dim, kv_heads, heads (free_heads is already true),
  // attention_ratio, ffn and 3 spans (11 fields); then align_hidden, align_experts, align_head_dim, align_ffn,
  // min_head_dim, free_heads, attention_ratio and 3 spans (10).
  CHECK(fields == 11 + 10);
}
