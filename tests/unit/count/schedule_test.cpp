#include <catch2/catch.hpp>

#include "smelt/schedule.hpp"
#include "test_configs.hpp"

using namespace smelt;

namespace {
std::vector<std::int64_t> layers_of(const LayerSchedule& s) {
  std::vector<std::int64_t> out;
  for (const auto& v : s.visits()) out.push_back(v.layer + 1);
  return out;
}
}  // namespace

TEST_CASE("an unlooped model visits each layer once in order", "[schedule]") {
  const LayerSchedule s = schedule(test::tiny_dense(3));
  CHECK(layers_of(s) == std::vector<std::int64_t>{1, 2, 3});
  CHECK(s.executed_layers() == 3);
}

TEST_CASE("a looped span runs as a block, again and again", "[schedule]") {
  ModelConfig c = test::tiny_dense(12);
  c.loops = {{4, 9, 2, 0.5}};  // the SMELT paper's 12-layer recipe
  const LayerSchedule s = schedule(c);
  CHECK(layers_of(s) == std::vector<std::int64_t>{1, 2, 3, 4, 5, 6, 7, 8, 9, 4, 5, 6, 7, 8, 9, 10, 11, 12});
  CHECK(s.visits()[9] == LayerVisit{3, 1});
  CHECK(s.blocks == std::vector<LayerBlock>{{0, 2, 1}, {3, 8, 2}, {9, 11, 1}});
  CHECK(s.executed_layers() == 18);
}

TEST_CASE("a loop over every layer with three passes triples the depth", "[schedule]") {
  ModelConfig c = test::tiny_dense(2);
  c.loops = {{1, 2, 3, 1.0 / 3.0}};
  CHECK(layers_of(schedule(c)) == std::vector<std::int64_t>{1, 2, 1, 2, 1, 2});
  CHECK(c.visits(0) == 3);
}

TEST_CASE("a schedule is held run-length: 65536 layers looped 1024 times are one block", "[schedule]") {
  ModelConfig c = test::tiny_dense(65536);
  c.loops = {{1, 65536, 1024, 1.0 / 1024}};
  const LayerSchedule s = schedule(c);
  CHECK(s.blocks == std::vector<LayerBlock>{{0, 65535, 1024}});
  CHECK(s.executed_layers() == 67'108'864);  // 2^16 x 2^10, never listed
  ModelConfig tail = test::tiny_dense(5);
  tail.loops = {{5, 5, 3, 1.0 / 3}};
  CHECK(schedule(tail).blocks == std::vector<LayerBlock>{{0, 3, 1}, {4, 4, 3}});
  CHECK(layers_of(schedule(tail)) == std::vector<std::int64_t>{1, 2, 3, 4, 5, 5, 5});
}

TEST_CASE("several spans run in layer order, each its own number of times", "[schedule]") {
  ModelConfig c = test::tiny_dense(8);
  c.loops = {{2, 3, 2, 0.5}, {5, 5, 1, 1.0}, {6, 7, 3, 1.0 / 3}};  // the middle span runs once: no loop
  const LayerSchedule s = schedule(c);
  CHECK(s.blocks == std::vector<LayerBlock>{{0, 0, 1}, {1, 2, 2}, {3, 4, 1}, {5, 6, 3}, {7, 7, 1}});
  CHECK(layers_of(s) == std::vector<std::int64_t>{1, 2, 3, 2, 3, 4, 5, 6, 7, 6, 7, 6, 7, 8});
  CHECK(s.executed_layers() == 14);  // 8 + 2 x (2 - 1) + 2 x (3 - 1)
  CHECK(c.visits(4) == 1);
  CHECK(c.visits(6) == 3);
  CHECK(c.residual_scale_at(1) == 0.5);
  CHECK(c.residual_scale_at(5) == 1.0 / 3);
  CHECK(c.residual_scale_at(4) == 1.0);
}
