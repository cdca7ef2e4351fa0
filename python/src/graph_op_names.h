// The Python names of the kernel layer's enums (message ops, reducers, operand targets), parsed
// once at the boundary by both graph-kernel bindings (native engine ops and DLPack entry points).
#pragma once
#include <string>

#include "sparse/types.h"

namespace nodeweave::py {

sparse::BinaryOp parse_op(const std::string& s);              // add, sub, ..., copy_rhs
sparse::ReduceOp parse_reduce(const std::string& s);          // sum, max, min, mean
sparse::Target parse_target(const std::string& s, const char* arg);  // u/src, e/edge, v/dst

}  // namespace nodeweave::py
