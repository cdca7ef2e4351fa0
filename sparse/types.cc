// Printable names of the sparse-layer vocabulary, used in error messages and by bindings.
#include "sparse/types.h"

namespace nodeweave::sparse {

const char* binary_op_name(BinaryOp op) {
  switch (op) {
    case BinaryOp::Add:
      return "add";
    case BinaryOp::Sub:
      return "sub";
    case BinaryOp::Mul:
      return "mul";
    case BinaryOp::Div:
      return "div";
    case BinaryOp::Dot:
      return "dot";
    case BinaryOp::CopyLhs:
      return "copy_lhs";
    case BinaryOp::CopyRhs:
      return "copy_rhs";
  }
  return "unknown";
}

const char* reduce_op_name(ReduceOp op) {
  switch (op) {
    case ReduceOp::Sum:
      return "sum";
    case ReduceOp::Max:
      return "max";
    case ReduceOp::Min:
      return "min";
    case ReduceOp::Mean:
      return "mean";
  }
  return "unknown";
}

const char* target_name(Target t) {
  switch (t) {
    case Target::U:
      return "u";
    case Target::E:
      return "e";
    case Target::V:
      return "v";
  }
  return "unknown";
}

}  // namespace nodeweave::sparse
