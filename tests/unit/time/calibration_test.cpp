// Calibrations (docs/time.md, "Calibration"): a GEMM's rate read from the
// table by hand, the reader's errors, the round trip, a quick measurement of
// this machine's CPU backend, and the roofline reading the table.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>

#include "scratch_dir.hpp"
#include "smelt/bench_calibrate.hpp"
#include "smelt/calibration.hpp"
#include "smelt/config_io.hpp"
#include "smelt/error.hpp"
#include "smelt/time.hpp"
#include "time/ops.hpp"
#include "time/roofline.hpp"

using namespace smelt;

namespace {

// A 2 x 2 x 1 table: rate(m, n, 64) = 1e9 x (1 + [m = 128] + 2 [n = 512]).
const std::string kTable = R"({"schema_version": 1, "kind": "calibration", "backend": "cuda", "device": "test",
  "dtype": "bf16", "threads": 1, "memory_bandwidth": 1e12, "op_overhead": 1e-6,
  "gemm": {"m": [32, 128], "n": [128, 512], "k": [64], "flops_per_second": [1e9, 3e9, 2e9, 4e9]},
  "hardware": {"schema": "smelt-hardware/1", "name": "x", "backend": "cuda", "peak_flops_bf16": 4e9,
    "peak_flops_fp16": 4e9, "peak_flops_fp32": 4e9, "memory_bandwidth": 1e12, "memory_bytes": 1,
    "link_bandwidth": 1e9, "link_latency": 1e-6, "network_bandwidth": 1e9, "network_latency": 1e-6,
    "devices_per_node": 1, "op_overhead": 1e-6, "gemm_efficiency": 1, "gemm_half_size": 0,
    "attention_efficiency": 1, "memory_efficiency": 1}})";

std::string with(std::string text, const std::string& from, const std::string& to) {
  text.replace(text.find(from), from.size(), to);
  return text;
}

}  // namespace

TEST_CASE("calibration: a GEMM's rate from the table, linear in log2 between its shapes", "[time][calibration]") {
  const Calibration c = parse_calibration(kTable, "t.json");
  const GemmTable& t = c.gemm;
  // On the grid: the measured rates (k fastest, then n, then m).
  CHECK(t.rate(32, 128, 64) == 1e9);
  CHECK(t.rate(32, 512, 64) == 3e9);
  CHECK(t.rate(128, 128, 64) == 2e9);
  CHECK(t.rate(128, 512, 64) == 4e9);
  // m = 64 lies a half of the way from 32 to 128 in log2 (5 -> 6 of 5 -> 7), n = 256 a half from 128 to 512:
  // (1 + 3 + 2 + 4) / 4 = 2.5e9.
  CHECK(t.rate(64, 256, 64) == Approx(2.5e9).epsilon(1e-15));
  // m = 16 and k = 4096 clamp to the axis; n = 181 (log2 7.4999) is 0.24997 of the way: 1e9 + 0.24997 x 2e9.
  CHECK(t.rate(16, 128, 4096) == 1e9);
  const double w = (std::log2(181.0) - 7) / 2;
  CHECK(t.rate(32, 181, 64) == Approx(1e9 + w * 2e9).epsilon(1e-12));
  // The roofline reads it: a 128 x 512 x 64 GEMM (8,388,608 FLOPs) at 4e9 FLOP/s is 2,097 us of compute; its
  // bytes, (128 x 64 + 128 x 512) x 2 + 64 x 512 x 2 = 212,992, take 0.21 us at 1e12 B/s; plus 1 us.
  const HardwareSpec hw = apply_calibration(c.hardware, c, "t.json");
  Op op = time_detail::gemm("x", 128, 512, 64, 2, 2);
  time_detail::put_time(op, hw, Dtype::bf16);
  CHECK(op.seconds == Approx(8388608.0 / 4e9 + 1e-6).epsilon(1e-12));
  CHECK(op.bound == Bound::compute);
}

TEST_CASE("calibration: bad files name the file, the field, the value and the rule", "[time][calibration][errors]") {
  CHECK_THROWS_WITH(parse_calibration(with(kTable, R"("schema_version": 1)", R"("schema_version": 2)"), "c.json"),
                    Catch::Contains("c.json") &&
                        Catch::Contains("schema_version = 2: must be 1 (this smelt reads calibration schema 1)"));
  CHECK_THROWS_WITH(parse_calibration(with(kTable, R"("kind": "calibration")", R"("kind": "time")"), "c.json"),
                    Catch::Contains(R"(kind = "time": must be "calibration")"));
  CHECK_THROWS_WITH(parse_calibration(with(kTable, "[1e9, 3e9, 2e9, 4e9]", "[1e9, 3e9, 2e9]"), "c.json"),
                    Catch::Contains("gemm.flops_per_second = [1000000000.0,3000000000.0,2000000000.0]: must be the "
                                    "grid's 2 x 2 x 1 = 4 rates in [1, 1e24] FLOP/s, k fastest"));
  CHECK_THROWS_WITH(parse_calibration(with(kTable, R"("m": [32, 128])", R"("m": [128, 32])"), "c.json"),
                    Catch::Contains("gemm.m = [128,32]: must be strictly ascending"));
  CHECK_THROWS_WITH(
      parse_calibration(with(kTable, R"("memory_bandwidth": 1e12, "op)", R"("memory_bandwidth": 0, "op)"), "c.json"),
      Catch::Contains("memory_bandwidth = 0: must be a rate in [1, 1e24]"));
  // A calibration for another backend than the spec's.
  const Calibration c = parse_calibration(kTable, "c.json");
  CHECK_THROWS_WITH(apply_calibration(hardware_spec("mi300x"), c, "c.json"),
                    Catch::Contains("c.json") && Catch::Contains(R"(backend = "cuda": must be the backend of the )"
                                                                 R"(hardware spec mi300x ("rocm"))"));
  const HardwareSpec h100 = apply_calibration(hardware_spec("h100"), c, "c.json");
  CHECK(h100.calibrated);
  CHECK(h100.calibration == "c.json (4 GEMM rates, bf16)");
}

TEST_CASE("calibration: written and read back, and read as a hardware spec file", "[time][calibration]") {
  const Calibration c = parse_calibration(kTable, "t.json");
  const std::string text = calibration_json(c);
  const Calibration back = parse_calibration(text, "back.json");
  CHECK(calibration_json(back) == text);
  CHECK(back.gemm.flops_per_second == c.gemm.flops_per_second);
  const auto file = test::scratch_path("smelt-calibration-test.json");
  std::ofstream(file) << text;
  const HardwareSpec hw = hardware_spec(file.string());
  CHECK(hw.name == "x");
  CHECK(hw.calibrated);
  REQUIRE(hw.gemm_table);
  CHECK(hw.gemm_table->rate(128, 512, 64) == 4e9);
  // A table alone (no "hardware") applies to a spec (calibrated_hardware_spec), but is no spec file by itself.
  Calibration table = c;
  table.has_hardware = false;
  std::ofstream(file) << calibration_json(table);
  CHECK_THROWS_WITH(hardware_spec(file.string()),
                    Catch::Contains("hardware: missing: a calibration used as a spec file must hold its spec"));
  CHECK(calibrated_hardware_spec("h200", file.string()).gemm_table->rate(32, 128, 64) == 1e9);
}

TEST_CASE("calibrate_cpu: this machine's CPU backend on the quick grid", "[time][calibration][bench]") {
  CalibrateOptions o;
  o.quick = true;
  o.repetitions = 1;
  const Calibration c = calibrate_cpu(o);
  CHECK(c.backend == "cpu");
  REQUIRE(c.gemm.flops_per_second.size() == 8);
  const double peak = *std::max_element(c.gemm.flops_per_second.begin(), c.gemm.flops_per_second.end());
  CHECK(c.hardware.peak_flops_fp32 == peak);
  // What holds at any speed (a loaded machine measured 80 MB/s where 100 MB/s was once required): every rate,
  // the bandwidth and the overhead are positive and finite, and within the spec file's rules, so that the
  // calibration reads back below.
  for (const double r : c.gemm.flops_per_second) CHECK((std::isfinite(r) && r >= 1 && r <= 1e24));
  CHECK((std::isfinite(c.memory_bandwidth) && c.memory_bandwidth >= 1 && c.memory_bandwidth <= 1e24));
  CHECK((std::isfinite(c.op_overhead) && c.op_overhead >= 0 && c.op_overhead < 1));
  CHECK((c.hardware.attention_efficiency > 0 && c.hardware.attention_efficiency <= 1));
  CHECK(c.gemm.m == std::vector<std::int64_t>{8, 64});
  CHECK(c.gemm.n == std::vector<std::int64_t>{32, 128});
  CHECK(c.gemm.k == std::vector<std::int64_t>{32, 128});
  // What it writes reads back as a spec that times a config.
  const Calibration back = parse_calibration(calibration_json(c), "cpu.json");
  const HardwareSpec hw = apply_calibration(back.hardware, back, "cpu.json");
  MemoryLayout l;
  l.activation_dtype = Dtype::fp32;
  const TimeReport r = step_time(read_checked_config(std::string(SMELT_SOURCE_DIR) + "/examples/tiny-moe.json"), l, hw);
  CHECK(r.training_seconds_per_token > 0);
  CHECK(r.hardware.calibrated);
}
