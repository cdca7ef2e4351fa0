// The IR's text form, for printing programs and for testing passes on text in, text out (LLVM's
// habit). One value or node per line:
//
//   program(%0: float32[4, 8], %1: int64[4]) {
//     %2: float32[8, 16] = capture #0
//     %3: float32[] = constant 2.0
//     %4: float32[4, 16] = mm(%0, %2) grad
//     %5: float32[4, 16] = mul_(%4, %3)
//     %6: float32[4, 16], %7: int64[4, 16] = sort(%5) {1, false}
//     guard %3 == 2.0
//     return (%6, %4)
//   }
//
// A type is a dtype name and a shape, with `@cuda:N` after it off the CPU. `capture #k` is tensor
// k of the program, read by reference (`requires_grad` after it when it did when traced); a
// constant of at most kInlineElements elements is written out (flat, row-major), a larger one as
// `constant #k`; `scalar` is a Python number's 0-d constant, which does not raise the type of what
// it meets in type promotion (float32 * 2.0 stays float32). A node is `op(inputs) {attrs}`: the
// attrs are positional (int `3`, double `1.5`, bool `true`, int list `[0, 1]`, `dtype(float32)`,
// `opaque(kind)`); a trailing `_` on the op name marks an in-place node, a trailing `grad` one that
// autograd recorded when traced, and `backward #k` one dispatched by the backward that region k
// describes: `backward #k of %f (%g..) -> (%d..)` names the forward node (by its first output), the
// gradients flowing into it and those it produced, `none` where absent. `guard %v == literal` is a
// Guard (program.h); a large expected value is written `#k`. Parsing a `#k` reference or an opaque
// attribute gives a placeholder: such a program can be printed, verified and rewritten, not run.
#pragma once
#include <string>

#include "core_framework/jit/program.h"

namespace nodeweave::jit {

constexpr int64_t kInlineElements = 16;

std::string print(const Program& program);
// Throws ValueError naming the line and what was expected.
Program parse(const std::string& text);

}  // namespace nodeweave::jit
