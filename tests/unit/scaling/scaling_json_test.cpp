// Law files: exact round trips, the hand-written single-law form, and errors
// that name the file, the JSON path and the rule.
#include <filesystem>
#include <functional>
#include <random>

#include <catch2/catch.hpp>

#include "scratch_dir.hpp"
#include "smelt/error.hpp"
#include "smelt/file_io.hpp"
#include "smelt/scaling_laws.hpp"
#include "test_configs.hpp"

using namespace smelt;

namespace {

const std::string kData = SMELT_SOURCE_DIR "/tests/data/";

std::string laws_file(const std::string& name, const std::string& text) {
  const auto path = test::scratch_path("smelt-scaling-json-" + name);
  write_text_file(path, text);
  return path.string();
}

using test::error_of;

}  // namespace

TEST_CASE("law files: the reference law file reads back byte for byte", "[scaling]") {
  const std::vector<Law> laws = read_laws(kData + "law-ref.json");
  REQUIRE(laws.size() == 1);
  const Law& l = laws.front();
  CHECK(l.form == LawForm::chinchilla);
  CHECK(l.label == "dense");
  CHECK(l.params == std::vector<double>{1.8169, 482.01, 2085.43, 0.3478, 0.3658});
  CHECK(l.runs == 240);
  CHECK(l.converged);
  CHECK(l.bootstrap.size() == 5);
  CHECK(l.ci_low == std::vector<double>{1.7659, 237.99, 0.0, 0.3184, 0.3246});
  CHECK(l.ci_high == std::vector<double>{1.8679, 726.03, 4619.71, 0.3772, 0.407});
  CHECK(laws_to_json(laws) == read_text_file(kData + "law-ref.json"));
}

TEST_CASE("law files: any doubles round-trip exactly, for both forms", "[scaling]") {
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> u(-30, 30);
  std::vector<Law> laws(2);
  laws[1].form = LawForm::smelt;
  for (Law& law : laws) {
    law.label = law.form == LawForm::smelt ? "looped \"x\"" : "";
    const std::size_t n = law.form == LawForm::smelt ? 6 : 5;
    for (std::size_t i = 0; i < n; ++i) law.params.push_back(std::exp(u(rng)) * (i % 2 ? 1 : -1));
    law.objective = std::exp(u(rng));
    law.rmse_log_loss = 1.0 / 3.0;
    law.runs = 245, law.starts = 4500, law.converged_starts = 4321;
    law.status = "converged";
    for (int k = 0; k < 3; ++k) {
      law.bootstrap.emplace_back();
      for (std::size_t i = 0; i < n; ++i) law.bootstrap.back().push_back(u(rng));
    }
    for (std::size_t i = 0; i < n; ++i) law.ci_low.push_back(u(rng)), law.ci_high.push_back(u(rng));
  }
  const std::string text = laws_to_json(laws);
  const std::vector<Law> back = read_laws(laws_file("roundtrip.json", text));
  REQUIRE(back.size() == 2);
  for (std::size_t k = 0; k < 2; ++k) {
    CHECK(back[k].form == laws[k].form);
    CHECK(back[k].label == laws[k].label);
    CHECK(back[k].params == laws[k].params);  // bit for bit
    CHECK(back[k].objective == laws[k].objective);
    CHECK(back[k].rmse_log_loss == laws[k].rmse_log_loss);
    CHECK(back[k].converged_starts == 4321);
    CHECK(back[k].bootstrap == laws[k].bootstrap);
    CHECK(back[k].ci_low == laws[k].ci_low);
    CHECK(back[k].ci_high == laws[k].ci_high);
  }
  CHECK(laws_to_json(back) == text);
  CHECK(text.rfind(
            "{\n  \"schema_version\": 1,\n  \"kind\": \"laws\",\n  \"laws\": [\n    {\n      \"form\": \"chinchilla\",",
            0) == 0);
}

TEST_CASE("law files: \"kind\": \"laws\" is read, and files written without it still are", "[scaling]") {
  const std::string with = laws_file("with-kind.json", R"({"schema_version": 1, "kind": "laws", "laws": [
      {"form": "chinchilla", "params": {"E": 1.8, "A": 450, "B": 2000, "alpha": 0.35, "beta": 0.37}}]})");
  const std::vector<Law> laws = read_laws(with);
  REQUIRE(laws.size() == 1);
  CHECK(laws[0].params == std::vector<double>{1.8, 450, 2000, 0.35, 0.37});
  const std::string without = laws_file("without-kind.json", R"({"schema_version": 1, "laws": [
      {"form": "chinchilla", "params": {"E": 1.8, "A": 450, "B": 2000, "alpha": 0.35, "beta": 0.37}}]})");
  CHECK(read_laws(without).front().params == laws[0].params);
}

TEST_CASE("law files: a single hand-written law object", "[scaling]") {
  const std::vector<Law> laws = read_laws(kData + "law-smelt.json");
  REQUIRE(laws.size() == 1);
  CHECK(laws[0].form == LawForm::smelt);
  CHECK(laws[0].label == "sparse");
  CHECK(laws[0].params == std::vector<double>{1.8169, 898.870346264903, 0.3478, 0.1, 2085.43, 0.3658});
  CHECK(laws[0].bootstrap.empty());
  CHECK(laws[0].ci_low.empty());
  CHECK(read_laws(kData + "law-target.json").front().bootstrap.size() == 5);
}

TEST_CASE("law files: errors name the file, the field and the rule", "[scaling]") {
  const std::string one = laws_file("one.json", R"({"form": "chinchilla", "params": {"E": 1, "A": 2, "B": 3,
      "alfa": 0.3, "beta": 0.3}, "bootstrap": [[1, 2, 3, 4]], "ci": {"E": [1, 2]}, "lable": "x"})");
  CHECK(error_of([&] { read_laws(one); }) ==
        "while reading laws '" + one +
            "':\n"
            "  params.alpha: missing (required)\n"
            "  params.alfa: unknown key (did you mean \"alpha\"?)\n"
            "  bootstrap[0] = [1,2,3,4]: must be an array of 5 numbers (E, A, B, alpha, beta)\n"
            "  ci.A: missing (required when ci lists any parameter)\n"
            "  ci.B: missing (required when ci lists any parameter)\n"
            "  ci.alpha: missing (required when ci lists any parameter)\n"
            "  ci.beta: missing (required when ci lists any parameter)\n"
            "  lable: unknown key (did you mean \"label\"?)");
  const std::string file = laws_file("file.json", R"({"schema_version": 2, "laws": [{"form": "kaplan"}]})");
  CHECK(error_of([&] { read_laws(file); }) == "while reading laws '" + file + "':\n" +
                                                  "  schema_version = 2: must be 1\n" +
                                                  "  laws[0].form = \"kaplan\": must be one of chinchilla, smelt");
  // A report's kind names what it is: another report's JSON is refused by name.
  const std::string bench = laws_file("bench-kind.json", R"({"schema_version": 1, "kind": "bench", "laws": [
      {"form": "chinchilla", "params": {"E": 1.8, "A": 450, "B": 2000, "alpha": 0.35, "beta": 0.37}}]})");
  CHECK(error_of([&] { read_laws(bench); }) ==
        "while reading laws '" + bench + "':\n  kind = \"bench\": must be \"laws\", the kind of a law file");
  // kind alone marks a file, not a hand-written law: the missing list is named.
  const std::string number = laws_file("number-kind.json", R"({"kind": 3})");
  CHECK(error_of([&] { read_laws(number); }) == "while reading laws '" + number +
                                                    "':\n  schema_version: missing (required)\n"
                                                    "  kind = 3: must be \"laws\", the kind of a law file\n"
                                                    "  laws: missing (required)");
  const std::string empty = laws_file("empty.json", R"({"schema_version": 1, "laws": []})");
  CHECK(error_of([&] { read_laws(empty); }) ==
        "while reading laws '" + empty + "':\n  laws = []: must be a non-empty array of law objects");
  const std::string list = laws_file("list.json", "[1, 2]");
  CHECK(error_of([&] { read_laws(list); }).find("top level: must be a law file") != std::string::npos);
  const std::string broken = laws_file("broken.json", "{\"form\": ");
  CHECK(error_of([&] { read_laws(broken); }).find(broken + ":1:10: malformed JSON") != std::string::npos);
  CHECK_THROWS_AS(read_laws("/nonexistent/laws.json"), io_error);
}
