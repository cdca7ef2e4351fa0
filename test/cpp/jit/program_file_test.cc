// Saved programs: a round trip keeps the text, the tensors and what a run computes; every damaged
// file (bad header, newer version, truncation at any length, any flipped byte) is refused with a
// ValueError, never read into a wrong program or a crash (this test runs under the sanitizers).
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <random>

#include "core_framework/engine/functional.h"
#include "core_framework/jit/executor.h"
#include "core_framework/jit/ir_text.h"
#include "core_framework/jit/passes/passes.h"
#include "core_framework/jit/program_file.h"
#include "core_framework/jit/tracer.h"
#include "jit_test_util.h"

namespace nodeweave::jit {
namespace {

using testing::from;

// y = relu(x W) * 2 + mean(W), with a guard on the weights' sum read by the host.
Program traced() {
  Tensor w = from({1, -2, 0.5f, 3, -1, 2}, {3, 2});
  Tensor x = from({1, 2, 3}, {1, 3});
  Tracer tr;
  tr.add_input(x);
  const bool positive = sum(w).item() > 0;
  Tensor y = add(mul(relu(mm(x, w)), positive ? 2.0 : 3.0), mean(w));
  Program p = tr.finish({y});
  run_passes(p);
  return p;
}

TEST(ProgramFile, RoundTripKeepsTextTensorsAndResults) {
  const Program p = traced();
  ASSERT_EQ(p.guards.size(), 1u);
  const std::string bytes = serialize_program(p);
  const Program q = deserialize_program(bytes);
  EXPECT_EQ(print(q), print(p));
  const Tensor x = from({0.5f, -1, 2}, {1, 3});
  const Tensor a = Executor(p).run({x})[0], b = Executor(q).run({x})[0];
  ASSERT_EQ(a.shape(), b.shape());
  for (int64_t i = 0; i < a.numel(); ++i) EXPECT_EQ(a.data<float>()[i], b.data<float>()[i]);
  EXPECT_EQ(serialize_program(q), bytes);  // and writing it again gives the same bytes

  const std::string path = ::testing::TempDir() + "/prog.nwp";
  save_program(p, path);
  EXPECT_EQ(print(load_program(path)), print(p));
  std::remove(path.c_str());
}

void expect_refused(const std::string& bytes, const std::string& fragment) {
  try {
    deserialize_program(bytes, "f.nwp");
    FAIL() << "accepted a damaged program (" << fragment << ")";
  } catch (const ValueError& e) {
    EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
  }
}

TEST(ProgramFile, RefusesDamagedFilesNamingTheProblem) {
  const std::string good = serialize_program(traced());
  expect_refused("hello", "not a nodeweave program file");
  std::string newer = good;
  newer[8] = 7;  // the version field's low byte
  expect_refused(newer, "format version 7, newer than this nodeweave reads (3)");
  std::string v1 = good;  // format 1 (before backward regions and fused nodes) still reads
  v1[8] = 1;
  EXPECT_EQ(print(deserialize_program(v1)), print(deserialize_program(good)));
  expect_refused(good.substr(0, good.size() - 1), "truncated");
  std::string flipped = good;
  flipped[good.size() / 2] ^= 0x10;
  expect_refused(flipped, "checksum");
  EXPECT_THROW(load_program("/nonexistent/prog.nwp"), ValueError);
}

TEST(ProgramFile, EveryTruncationAndEveryByteFlipIsRefusedCleanly) {
  const std::string good = serialize_program(traced());
  for (size_t n = 0; n < good.size(); ++n)
    EXPECT_THROW(deserialize_program(good.substr(0, n)), ValueError) << n;
  std::mt19937 rng(7);
  for (int trial = 0; trial < 300; ++trial) {
    std::string bad = good;
    const size_t at = rng() % bad.size();
    bad[at] = static_cast<char>(bad[at] ^ static_cast<char>(1 + rng() % 255));
    EXPECT_THROW(deserialize_program(bad), ValueError) << "flip at " << at;
  }
}

TEST(ProgramFile, ValidChecksumOverDamagedRecordsIsStillRefused) {
  // A payload rewritten with a matching checksum must still be checked record by record: the
  // loader rebuilds the header around random payload edits.
  const std::string good = serialize_program(traced());
  const size_t header = 28;
  std::mt19937 rng(11);
  auto reseal = [&](std::string payload) {
    std::string out = good.substr(0, 12);
    const uint64_t size = payload.size();
    uint64_t h = 1469598103934665603ull;
    for (char c : payload) h = (h ^ static_cast<unsigned char>(c)) * 1099511628211ull;
    out.append(reinterpret_cast<const char*>(&size), 8);
    out.append(reinterpret_cast<const char*>(&h), 8);
    return out + payload;
  };
  int refused = 0;
  for (int trial = 0; trial < 300; ++trial) {
    std::string payload = good.substr(header);
    const size_t at = rng() % payload.size();
    payload[at] = static_cast<char>(payload[at] ^ static_cast<char>(1 + rng() % 255));
    try {
      const Program p = deserialize_program(reseal(payload));
      Executor ex(p);  // a flip inside tensor data or a number's digits can still be a program
    } catch (const ValueError&) {
      ++refused;
    }
  }
  EXPECT_GT(refused, 0);
}

}  // namespace
}  // namespace nodeweave::jit
