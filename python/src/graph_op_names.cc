// Parsing of op, reducer and target names (see graph_op_names.h).
#include "graph_op_names.h"

#include "core_framework/runtime/error.h"

namespace nodeweave::py {

using sparse::BinaryOp;
using sparse::ReduceOp;
using sparse::Target;

BinaryOp parse_op(const std::string& s) {
  if (s == "add") return BinaryOp::Add;
  if (s == "sub") return BinaryOp::Sub;
  if (s == "mul") return BinaryOp::Mul;
  if (s == "div") return BinaryOp::Div;
  if (s == "dot") return BinaryOp::Dot;
  if (s == "copy_lhs") return BinaryOp::CopyLhs;
  if (s == "copy_rhs") return BinaryOp::CopyRhs;
  throw ValueError(
      str_cat("op must be one of add, sub, mul, div, dot, copy_lhs, copy_rhs; got '", s, "'"));
}

ReduceOp parse_reduce(const std::string& s) {
  if (s == "sum") return ReduceOp::Sum;
  if (s == "max") return ReduceOp::Max;
  if (s == "min") return ReduceOp::Min;
  if (s == "mean") return ReduceOp::Mean;
  throw ValueError(str_cat("reduce must be one of sum, max, min, mean; got '", s, "'"));
}

Target parse_target(const std::string& s, const char* arg) {
  if (s == "u" || s == "src") return Target::U;
  if (s == "e" || s == "edge") return Target::E;
  if (s == "v" || s == "dst") return Target::V;
  throw ValueError(str_cat(arg, " must be 'u', 'e' or 'v', got '", s, "'"));
}

}  // namespace nodeweave::py
