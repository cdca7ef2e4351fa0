// Internal to sparse/cpu: the message ops of gSpMM/gSDDMM as small functors the kernels are
// templated on, so each (op, reduce) pair compiles to a straight inner loop with the op inlined.
#pragma once
#include <cstdint>
#include <utility>

#include "sparse/types.h"

namespace nodeweave::sparse::cpu::detail {

// apply(l, lo, r, ro, len): the message from lhs element l[lo] and rhs element r[ro]. Only Dot
// reads `len` elements. Operands are passed as base pointer + offset, never as a pre-added
// pointer, because the unused side of a copy op is a null pointer.
template <typename T>
struct OpAdd {
  static constexpr bool kLhs = true, kRhs = true, kDot = false;
  static T apply(const T* l, int64_t lo, const T* r, int64_t ro, int64_t) { return l[lo] + r[ro]; }
};
template <typename T>
struct OpSub {
  static constexpr bool kLhs = true, kRhs = true, kDot = false;
  static T apply(const T* l, int64_t lo, const T* r, int64_t ro, int64_t) { return l[lo] - r[ro]; }
};
template <typename T>
struct OpMul {
  static constexpr bool kLhs = true, kRhs = true, kDot = false;
  static T apply(const T* l, int64_t lo, const T* r, int64_t ro, int64_t) { return l[lo] * r[ro]; }
};
template <typename T>
struct OpDiv {
  static constexpr bool kLhs = true, kRhs = true, kDot = false;
  static T apply(const T* l, int64_t lo, const T* r, int64_t ro, int64_t) { return l[lo] / r[ro]; }
};
// Dot keeps kLanes independent partial sums: one running sum is a chain of dependent adds that
// the compiler may not reorder (nor vectorize) without -ffast-math, which left u_dot_v at d=64
// bound by add latency (about 4 cycles per element) instead of by memory.
template <typename T>
struct OpDot {
  static constexpr bool kLhs = true, kRhs = true, kDot = true;
  static constexpr int64_t kLanes = 16;
  static T apply(const T* l, int64_t lo, const T* r, int64_t ro, int64_t len) {
    const T* a = l + lo;
    const T* b = r + ro;
    T part[kLanes] = {};
    int64_t i = 0;
    for (; i + kLanes <= len; i += kLanes)
      for (int64_t j = 0; j < kLanes; ++j) part[j] += a[i + j] * b[i + j];
    T s = 0;
    for (; i < len; ++i) s += a[i] * b[i];
    for (int64_t j = 0; j < kLanes; ++j) s += part[j];
    return s;
  }
};
template <typename T>
struct OpCopyLhs {
  static constexpr bool kLhs = true, kRhs = false, kDot = false;
  static T apply(const T* l, int64_t lo, const T*, int64_t, int64_t) { return l[lo]; }
};
template <typename T>
struct OpCopyRhs {
  static constexpr bool kLhs = false, kRhs = true, kDot = false;
  static T apply(const T*, int64_t, const T* r, int64_t ro, int64_t) { return r[ro]; }
};

// Message for output feature k of rows l and r. The plain path (no broadcast, not Dot) indexes
// both sides by k so the caller's loop over k vectorizes.
template <typename Op, bool kBcast, typename T>
inline T message(const T* l, const T* r, int64_t k, int64_t reduce_size, const int64_t* lhs_off,
                 const int64_t* rhs_off) {
  if constexpr (kBcast) {
    return Op::apply(l, lhs_off[k], r, rhs_off[k], reduce_size);
  } else if constexpr (Op::kDot) {
    return Op::apply(l, k * reduce_size, r, k * reduce_size, reduce_size);
  } else {
    return Op::apply(l, k, r, k, 1);
  }
}

// Calls f(Op{}) with the functor type for `op`.
template <typename T, typename F>
void dispatch_op(BinaryOp op, F&& f) {
  switch (op) {
    case BinaryOp::Add:
      return f(OpAdd<T>{});
    case BinaryOp::Sub:
      return f(OpSub<T>{});
    case BinaryOp::Mul:
      return f(OpMul<T>{});
    case BinaryOp::Div:
      return f(OpDiv<T>{});
    case BinaryOp::Dot:
      return f(OpDot<T>{});
    case BinaryOp::CopyLhs:
      return f(OpCopyLhs<T>{});
    case BinaryOp::CopyRhs:
      return f(OpCopyRhs<T>{});
  }
}

// Calls f(std::bool_constant<b>{}) so a runtime flag becomes a template parameter.
template <typename F>
void dispatch_bool(bool b, F&& f) {
  if (b)
    f(std::true_type{});
  else
    f(std::false_type{});
}

}  // namespace nodeweave::sparse::cpu::detail
