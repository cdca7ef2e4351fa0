// gSpMM entry point: validates the graph, operands and outputs, then runs the CPU or CUDA kernel.
#include "sparse/spmm.h"

#include "core_framework/runtime/error.h"
#include "sparse/checks.h"
#include "sparse/cpu/cpu_kernels.h"
#include "sparse/cuda/cuda_kernels.h"

namespace nodeweave::sparse {

using detail::present;

std::vector<int64_t> spmm_out_feat(BinaryOp op, const std::vector<int64_t>& lhs_feat,
                                   const std::vector<int64_t>& rhs_feat) {
  return BcastInfo::compute(op, lhs_feat, rhs_feat, "gspmm").out_shape;
}

void spmm(const SpmmArgs& args) {
  const char* fn = "gspmm";
  const CompressedView& g = args.in_edges;
  detail::check_compressed(fn, g);
  const bool use_lhs = args.op != BinaryOp::CopyRhs;
  const bool use_rhs = args.op != BinaryOp::CopyLhs;
  // The operand a copy op ignores is neither checked nor read.
  const ArrayView none;
  const ArrayView& lhs = use_lhs ? args.lhs : none;
  const ArrayView& rhs = use_rhs ? args.rhs : none;

  detail::check_features(fn, "out", args.out);
  if (use_lhs)
    detail::check_operand(fn, "lhs", args.op, lhs, args.out, g.num_cols,
                          "the number of source nodes");
  if (use_rhs)
    detail::check_operand(fn, "rhs", args.op, rhs, args.out, g.num_edges(), "the number of edges");
  detail::check_rows(fn, "out", args.out, g.num_rows, "the number of destination nodes");
  const BcastInfo bcast = detail::check_out_bcast(fn, args.op, lhs, rhs, args.out);

  const bool minmax = args.reduce == ReduceOp::Max || args.reduce == ReduceOp::Min;
  ArrayView arg_none;
  const ArrayView& arg_lhs = minmax ? args.arg_lhs : arg_none;
  const ArrayView& arg_rhs = minmax ? args.arg_rhs : arg_none;
  if (minmax) {
    // An arg array the op does not need is optional, but checked and filled when given.
    if (use_lhs || present(arg_lhs))
      detail::check_arg(fn, "arg_lhs", arg_lhs, g.num_rows, bcast.out_len, args.out);
    if (use_rhs || present(arg_rhs))
      detail::check_arg(fn, "arg_rhs", arg_rhs, g.num_rows, bcast.out_len, args.out);
  }
  detail::check_same_device(fn, {{"indptr", &g.indptr},
                                 {"lhs", &lhs},
                                 {"rhs", &rhs},
                                 {"out", &args.out},
                                 {"arg_lhs", &arg_lhs},
                                 {"arg_rhs", &arg_rhs}});

  SpmmArgs checked = args;
  checked.lhs = lhs;
  checked.rhs = rhs;
  checked.arg_lhs = arg_lhs;
  checked.arg_rhs = arg_rhs;
  if (args.out.device.is_cuda())
    cuda::spmm(checked, bcast);
  else
    cpu::spmm(checked, bcast);
}

}  // namespace nodeweave::sparse
