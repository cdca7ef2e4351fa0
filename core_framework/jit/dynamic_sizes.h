// Programs whose sizes follow their inputs' ("automatic dynamic shapes", as torch.compile's): a
// step traced on one sampled block and again on a second, of other node and edge counts, is
// generalized into one program that runs on every later block, instead of tracing each.
//
// The tracer records concrete sizes. Traces of the same code on inputs of other sizes are
// compared node by node (anti-unification): everything must be the same but integers — in value
// shapes, in op attributes (a slice's end, a view's shape), in the shapes of constants that are one
// value repeated (a degree divisor's ones(num_edges)) and in scalar constants (a mean's 1 / n).
// Each integer that differs must be, in every trace, n, k * n or n + c for a size n of the call (a
// dim of a tensor input, an object input's node or edge count). Sizes equal in every trace form
// one class, and when several forms fit one integer, a run checks that they still agree (a tie),
// so a call that breaks an equality the traces had is not served but traced. Sizes that did not
// change across the traces stay fixed (a call with another batch size traces again, and the traces
// are generalized anew). When anything else differs, or a differing integer matches no size, there
// is no dynamic program, and each signature keeps its own trace (always correct, only slower).
//
// What the comparison cannot see: Python that branches on a size (`if g.num_edges() > k`), and an
// integer computed from a size that happened to be the same in every trace (`n // 2` for n = 9 and
// 8). Like any branch of traced code, they are fixed by the traces (docs/jit.md, "Graphs as inputs,
// and sizes that vary").
#pragma once
#include <optional>
#include <string>

#include "core_framework/jit/program.h"

namespace nodeweave::jit {

// The sizes of one call, in symbol order: each tensor input's dims, then each object input's
// sizes (ObjectAttr::sizes).
std::vector<int64_t> call_sizes(const TensorList& inputs, const std::vector<OpaquePtr>& objects);
// The same for the call a program was traced with.
std::vector<int64_t> traced_sizes(const Program& p);

struct DynamicProgram {
  Program base;  // the first trace
  std::vector<int64_t> base_sizes;
  // Per symbol: the first symbol of its class (the sizes equal to it in both traces), and whether
  // it kept its value between the traces (a run must have that value).
  std::vector<int64_t> class_of;
  std::vector<bool> fixed;

  enum class Where : uint8_t { ValueDim, AttrInt, AttrListItem, ScalarConstant };
  // What a scalar constant is of n = scale * size: n itself, or what a mean's 1 / n and an
  // unbiased variance's n / (n - 1) compute in double precision on the host.
  enum class Of : uint8_t { N, Reciprocal, Bessel, ReciprocalMinusOne };
  static double value_of(Of f, int64_t n);
  // An integer of the program: value `a`'s dim `b`, node `a`'s attribute `b` (item `c` of a
  // list), or the scalar constant value `a`; it is scale * sizes[symbol] + offset (for a scalar,
  // `of` that).
  struct Slot {
    Where where;
    int64_t a = 0, b = 0, c = 0;
    int64_t symbol = 0;
    int64_t scale = 1;
    int64_t offset = 0;
    Of of = Of::N;  // ScalarConstant only
  };
  std::vector<Slot> slots;
  // Two forms that fitted one integer in every trace: a run needs ka * sizes[a] + ca ==
  // kb * sizes[b] + cb.
  struct Tie {
    int64_t a, ka, ca, b, kb, cb;
  };
  std::vector<Tie> ties;
  // Constants that are one value repeated, remade at each size: value id and the value.
  std::vector<std::pair<int64_t, double>> fills;

  // Empty when the call's sizes fit (fixed sizes unchanged, each class still equal, the ties
  // hold), else why not.
  std::string mismatch(const std::vector<int64_t>& sizes) const;
  // The program for these sizes (mismatch() must be empty).
  Program instantiate(const std::vector<int64_t>& sizes) const;
};

// The generalization of two traces of one function (see the top of the file), or nullopt with the
// first difference in *why.
std::optional<DynamicProgram> generalize(const Program& first, const Program& second,
                                         std::string* why = nullptr);
// The same over more traces (the first is the base): a size is fixed when it has one value in all
// of them, and sizes are one class when they are equal in each.
std::optional<DynamicProgram> generalize(const std::vector<const Program*>& traces,
                                         std::string* why = nullptr);

}  // namespace nodeweave::jit
