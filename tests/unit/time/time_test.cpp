// step_time() and its parts: the forward ops' FLOPs against count() on every
// example, and hand-computed times of one GEMM, one attention core, one
// all-to-all and a two-stage pipeline's bubble on the shipped H100 spec
// (989.4e12 bf16 FLOP/s, 3.35e12 B/s, link 450e9 B/s and 5 us, op overhead
// 5 us, GEMM efficiency 0.75 with half size 64, attention 0.5, memory 0.85).
#include <catch2/catch.hpp>

#include <filesystem>
#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "../memory/tiny_moe_layout.hpp"
#include "smelt/config_io.hpp"
#include "smelt/count.hpp"
#include "smelt/error.hpp"
#include "smelt/file_io.hpp"
#include "smelt/hardware.hpp"
#include "smelt/time.hpp"
#include "time/ops.hpp"
#include "time/roofline.hpp"

using namespace smelt;

namespace {

CheckedConfig checked_example(const std::string& name) {
  return read_checked_config(std::string(SMELT_SOURCE_DIR) + "/examples/" + name);
}

using test::small;

const Op& find(const StepTime& s, std::string_view name) {
  for (const Op& op : s.ops)
    if (op.name == name) return op;
  FAIL("no op " << std::string(name));
  return s.ops.front();
}

}  // namespace

TEST_CASE("the forward ops' FLOPs are count()'s on every example, MTP included", "[time]") {
  const HardwareSpec hw = hardware_spec("h100");
  std::vector<std::filesystem::path> files;
  for (const char* dir : {"/examples", "/examples/hf"})
    for (const auto& f : std::filesystem::directory_iterator(std::string(SMELT_SOURCE_DIR) + dir))
      if (f.path().extension() == ".json" && f.path().filename().string().rfind("bench-", 0) != 0)
        files.push_back(f.path());
  REQUIRE(files.size() >= 15);
  for (const auto& file : files) {
    CAPTURE(file.string());
    const CheckedConfig c = read_checked_config(file);
    MemoryLayout l;
    l.micro_batch = 2;
    l.seq = 64;
    const TimeReport r = step_time(c, l, hw);
    double main = 0, mtp = 0;
    for (const Op& op : r.forward.ops) {
      if (op.kind != OpKind::gemm && op.kind != OpKind::grouped_gemm && op.kind != OpKind::attention) continue;
      // A row stands for every visit of its layer kind (Op::times).
      (op.name == "mtp" ? mtp : main) += op.flops * static_cast<double>(op.times);
    }
    const CostReport cost = count(c, CountOptions{false, 64});
    CHECK(main == Approx(cost.flops.forward * 128).epsilon(1e-12));
    CHECK(mtp == Approx(cost.flops.terms.mtp * 128).epsilon(1e-12).margin(1e-6));
    // The backward's GEMMs and attention: twice the forward's, but for the passes truncated backprop
    // leaves forward-only (Huginn): count()'s training less its forward.
    double backward = 0;
    for (const Op& op : r.training.ops)
      if (op.backward && op.kind != OpKind::elementwise) backward += op.flops * static_cast<double>(op.times);
    CHECK(backward == Approx((cost.flops.training - cost.flops.forward - cost.flops.terms.mtp) * 128).epsilon(1e-12));
    if (c.get().loops.empty() || c.get().loops.front().backprop_passes == 0)
      CHECK(backward == Approx(2 * (main + mtp)).epsilon(1e-12));
  }
}

TEST_CASE("recompute: full runs the first visits' forward again, selective the attention cores", "[time]") {
  const CheckedConfig c = checked_example("smelt-looped-12l.json");
  const CostReport cost = count(c, CountOptions{false, 64});
  MemoryLayout l;
  l.micro_batch = 2;
  l.seq = 64;
  l.recompute = Recompute::full;
  l.recompute_layers = 3;
  // The FLOPs of the recompute rows (elementwise ops count no FLOPs); with `core_only`, the attention cores'.
  const auto recomputed = [&](const MemoryLayout& layout, bool core_only) {
    double flops = 0;
    for (const Op& op : step_time(c, layout, hardware_spec("h100")).training.ops)
      if (op.name == "recompute" && (!core_only || op.kind == OpKind::attention))
        flops += op.flops * static_cast<double>(op.times);
    return flops;
  };
  // The first 3 visits of the schedule are stored layers 1 to 3 (the loop starts later), each
  // 2 sequences x (64 x matmul FLOPs per token + score FLOPs per pair x pairs).
  double first3 = 0;
  for (std::size_t i = 0; i < 3; ++i) {
    const LayerCost& x = cost.layers[i];
    first3 += 2.0 * (64.0 * static_cast<double>(x.matmul_flops_per_visit) +
                     static_cast<double>(x.score_flops_per_pair) * static_cast<double>(x.attended_pairs));
  }
  CHECK(first3 > 0);
  CHECK(recomputed(l, false) == Approx(first3).epsilon(1e-12));
  // Every visit (recompute_layers 0): the whole forward of the layers, count()'s FLOPs less the head's.
  l.recompute_layers = 0;
  CHECK(recomputed(l, false) == Approx(128 * (cost.flops.forward - cost.flops.terms.lm_head)).epsilon(1e-12));
  // Selective: the attention cores of every visit, nothing else.
  l.recompute = Recompute::selective;
  double core = 0;
  for (const LayerCost& x : cost.layers)
    core += 2.0 * static_cast<double>(x.visits * x.score_flops_per_pair * x.attended_pairs);
  CHECK(recomputed(l, true) == Approx(core).epsilon(1e-12));
  CHECK(recomputed(l, false) == recomputed(l, true));
}

TEST_CASE("one GEMM by hand: 4096 cubed in bf16 on an H100 is compute-bound", "[time]") {
  const HardwareSpec hw = hardware_spec("h100");
  Op op = time_detail::gemm("x", 4096, 4096, 4096, 2, 2);
  // 2 x 4096^3 = 137,438,953,472 FLOPs; (4096 x 4096 in + 4096 x 4096 out) x 2 + 4096 x 4096 x 2 = 100,663,296 B.
  CHECK(op.flops == 137438953472.0);
  CHECK(op.bytes == 100663296.0);
  time_detail::put_time(op, hw, Dtype::bf16);
  // efficiency 0.75 x (4096 / 4160)^3 = 0.75 x 0.954553 = 0.715914; compute 137,438,953,472 / (989.4e12 x 0.715907) =
  // 194.03 us; memory 100,663,296 / (3.35e12 x 0.85) = 35.35 us; plus 5 us.
  const double efficiency = 0.75 * (4096.0 / 4160) * (4096.0 / 4160) * (4096.0 / 4160);
  CHECK(efficiency == Approx(0.715914).epsilon(1e-6));
  CHECK(op.seconds == Approx(137438953472.0 / (989.4e12 * efficiency) + 5e-6).epsilon(1e-12));
  CHECK(op.seconds == Approx(199.03e-6).epsilon(1e-4));
  CHECK(op.bound == Bound::compute);
}

TEST_CASE("one attention core by hand: tiny-moe's at 2 x 16 tokens is overhead-bound", "[time]") {
  const TimeReport r = step_time(checked_example("tiny-moe.json"), small(), hardware_spec("h100"));
  const Op& core = find(r.forward, "attention_core");
  // 16 x 17 / 2 = 136 causal pairs a sequence; 2 x (4 x 16 + 4 x 16) = 256 FLOPs a pair; 2 sequences.
  CHECK(core.flops == 2.0 * 136 * 256);
  // Q, K, V read and the output written, fused: 32 tokens x (2 x 64 + 2 x 64 + 2 x 2 x 16) x 2 bytes = 20,480.
  CHECK(core.bytes == 20480.0);
  // compute 69,632 / (989.4e12 x 0.5) = 0.14 ns and memory 20,480 / (3.35e12 x 0.85) = 7.19 ns, under 5 us.
  CHECK(core.seconds == Approx(20480.0 / (3.35e12 * 0.85) + 5e-6).epsilon(1e-12));
  CHECK(core.bound == Bound::overhead);
}

TEST_CASE("one all-to-all by hand: tiny-moe's dispatch over 2 expert ranks", "[time]") {
  MemoryLayout l = small();
  l.ep = 2;
  l.dp = 2;
  const TimeReport r = step_time(checked_example("tiny-moe.json"), l, hardware_spec("h100"));
  const Op& a2a = find(r.forward, "ep_all_to_all");
  // 32 tokens x top-2 x 64 wide x 2 bytes = 8,192 bytes; (p - 1) alpha + (p - 1) / p x bytes / beta on the link.
  CHECK(a2a.bytes == 8192.0);
  CHECK(a2a.seconds == Approx(5e-6 + 0.5 * 8192 / 450e9).epsilon(1e-12));
  // Each rank holds 4 of the 8 experts: 64 routed rows, 16 a group.
  const Op& experts = find(r.forward, "experts");
  CHECK(experts.groups == 4);
  CHECK(experts.m == 16);
}

TEST_CASE("a two-stage pipeline's bubble: one micro-batch of the most loaded stage", "[time]") {
  MemoryLayout l = small();
  l.pp = 2;
  l.microbatches = 4;
  const TimeReport r = step_time(checked_example("tiny-moe.json"), l, hardware_spec("h100"));
  double per_micro_batch = 0, total = 0;
  const Op* bubble = nullptr;
  for (const Op& op : r.training.ops) {
    total += op.seconds * static_cast<double>(op.times);
    if (op.kind == OpKind::bubble) bubble = &op;
    if (op.kind == OpKind::bubble || op.name == "pp_send" || op.name == "optimizer" || op.name == "zero_grad") continue;
    // A micro-batch's op: its row runs (visits of its layer kind) x 4 micro-batches times.
    CHECK(op.times % 4 == 0);
    per_micro_batch += op.seconds * static_cast<double>(op.times / 4);
  }
  REQUIRE(bubble != nullptr);
  // (pp - 1) / vpp = 1 micro-batch's forward and backward on the stage.
  CHECK(bubble->seconds == Approx(per_micro_batch).epsilon(1e-12));
  CHECK(r.training.seconds == Approx(total).epsilon(1e-12));
  // The job's tokens: 4 micro-batches x 2 x 16.
  CHECK(r.training.tokens == 128.0);
  CHECK(r.training_seconds_per_token == Approx(r.training.seconds / 128).epsilon(1e-12));
}

TEST_CASE("the step's gradient zeroing and AdamW update, by hand", "[time]") {
  // tiny-moe's 369,728 parameters (bench_step_test's hand count), one stage. Zeroing writes each fp32 gradient once:
  // 4 x 369,728 = 1,478,912 bytes. AdamW with bf16 weights and an fp32 master copy reads and writes the weights
  // (2 x 2), reads the gradient (4), and reads and writes the master copy and two moments (6 x 4): 32 bytes a
  // parameter, 11,831,296; with fp32 weights there is no master copy: 2 x 4 + 4 + 4 x 4 = 28, 10,352,384.
  const auto bytes = [](const TimeReport& r, std::string_view name) {
    for (const Op& op : r.training.ops)
      if (op.name == name) return op.bytes;
    return -1.0;
  };
  MemoryLayout l = small();
  const TimeReport mixed = step_time(checked_example("tiny-moe.json"), l, hardware_spec("h100"));
  CHECK(bytes(mixed, "zero_grad") == 1478912.0);
  CHECK(bytes(mixed, "optimizer") == 11831296.0);
  l.param_dtype = Dtype::fp32;
  const TimeReport fp32 = step_time(checked_example("tiny-moe.json"), l, hardware_spec("h100"));
  CHECK(bytes(fp32, "zero_grad") == 1478912.0);
  CHECK(bytes(fp32, "optimizer") == 10352384.0);
}

TEST_CASE("hardware: unknown names suggest the nearest, spec files are checked field by field", "[time][errors]") {
  CHECK_THROWS_WITH(hardware_spec("h10"),
                    Catch::Contains("hardware = \"h10\"") && Catch::Contains("did you mean \"h100\""));
  CHECK_THROWS_WITH(parse_hardware_spec(R"({"schema": "smelt-hardware/1", "name": "x", "backend": "cuda"})", "x.json"),
                    Catch::Contains("x.json") && Catch::Contains("memory_bandwidth"));
  const std::string negative = R"({"schema": "smelt-hardware/1", "name": "x", "backend": "cuda",
    "peak_flops_bf16": -1, "peak_flops_fp16": 1, "peak_flops_fp32": 1, "memory_bandwidth": 1, "memory_bytes": 1,
    "link_bandwidth": 1, "link_latency": 1, "network_bandwidth": 1, "network_latency": 1, "devices_per_node": 8,
    "op_overhead": 0, "gemm_efficiency": 1, "gemm_half_size": 0, "attention_efficiency": 1, "memory_efficiency": 1})";
  CHECK_THROWS_WITH(parse_hardware_spec(negative, "neg.json"),
                    Catch::Contains("peak_flops_bf16 = -1: must be a rate in [1, 1e24]"));
  for (const std::string& name : hardware_names()) CHECK_NOTHROW(hardware_spec(name));
  CHECK(hardware_names() == std::vector<std::string>{"a100-80", "b200", "h100", "h200", "mi300x"});
}

TEST_CASE("time options: an imbalance below 1 names the field", "[time][errors]") {
  TimeOptions o;
  o.imbalance = 0.5;
  CHECK_THROWS_WITH(step_time(checked_example("tiny-moe.json"), small(), hardware_spec("h100"), o),
                    Catch::Contains("TimeOptions::imbalance = 0.5: must be in [1, 1000000]"));
}

namespace {
// The shipped H100 spec with one field replaced, as a spec file's text.
std::string h100_with(const std::string& key, double value) {
  nlohmann::json j = nlohmann::json::parse(read_text_file(std::string(SMELT_SOURCE_DIR) + "/data/hardware/h100.json"));
  j[key] = value;
  return j.dump();
}
}  // namespace

TEST_CASE("hardware: an efficiency too small to give a finite time is refused by name", "[time][errors]") {
  // 5e-324, the smallest double, lay in the old rule (0, 1]: bytes / (3.35e12 x 5e-324) is infinite, and 1e-300 x
  // 989.4e12 FLOP/s made a large GEMM's time infinite too. Each efficiency is at least 1e-4.
  for (const char* key : {"gemm_efficiency", "attention_efficiency", "memory_efficiency"}) {
    CHECK_THROWS_WITH(parse_hardware_spec(h100_with(key, 5e-324), "x.json"),
                      Catch::Contains(fmt::format("{} = 5e-324: must be a fraction in [0.0001, 1]", key)));
    CHECK_THROWS_WITH(parse_hardware_spec(h100_with(key, 1e-300), "x.json"),
                      Catch::Contains(fmt::format("{} = 1e-300: must be a fraction in [0.0001, 1]", key)));
    CHECK_NOTHROW(parse_hardware_spec(h100_with(key, 1e-4), "x.json"));
  }
}

TEST_CASE("an op whose time is not finite is an error naming the op, never an infinite time", "[time][errors]") {
  // A spec built in code is not read, so not checked: the step checks every time it computes.
  HardwareSpec hw = hardware_spec("h100");
  hw.memory_efficiency = 5e-324;
  CHECK_THROWS_AS(step_time(checked_example("tiny-moe.json"), small(), hw), overflow_error);
  CHECK_THROWS_WITH(
      step_time(checked_example("tiny-moe.json"), small(), hw),
      Catch::Contains("the time of op embedding (elementwise, 0 FLOPs, 8192 bytes) on h100 is inf s, not a finite "
                      "time: memory_bandwidth = 3.35e+12 x memory_efficiency = 5e-324"));
  // 2 x 4096^3 FLOPs over 989.4e12 x 5e-324 x 0.716 FLOP/s (a denormal rate): infinite.
  hw = hardware_spec("h100");
  hw.gemm_efficiency = 5e-324;
  Op op = time_detail::gemm("x", 4096, 4096, 4096, 2, 2);
  CHECK_THROWS_WITH(time_detail::put_time(op, hw, Dtype::bf16),
                    Catch::StartsWith("the time of op x (gemm 4096 x 4096 x 4096, 1.374e+11 FLOPs, 1.007e+08 bytes) "
                                      "on h100 is inf s, not a finite time: peak_flops_bf16 = 9.894e+14 x "
                                      "gemm_efficiency = 5e-324"));
}
