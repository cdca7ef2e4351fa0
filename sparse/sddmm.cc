// gSDDMM entry point: validates the edge list, operands and output, then runs the CPU or CUDA
// kernel.
#include "sparse/sddmm.h"

#include "core_framework/runtime/error.h"
#include "sparse/checks.h"
#include "sparse/cpu/cpu_kernels.h"
#include "sparse/cuda/cuda_kernels.h"

namespace nodeweave::sparse {

namespace {

// Rows an operand indexed by `t` must have, and how the message names them.
int64_t target_rows(const CooView& g, Target t) {
  switch (t) {
    case Target::U:
      return g.num_src;
    case Target::E:
      return g.num_edges();
    case Target::V:
      return g.num_dst;
  }
  return -1;
}

const char* target_what(Target t) {
  switch (t) {
    case Target::U:
      return "the number of source nodes (target u)";
    case Target::E:
      return "the number of edges (target e)";
    case Target::V:
      return "the number of destination nodes (target v)";
  }
  return "?";
}

void check_target(const char* fn, const char* name, Target t) {
  NW_CHECK(t == Target::U || t == Target::E || t == Target::V, ValueError, fn, ": ", name,
           " must be u, e or v, got ", static_cast<int>(t));
}

}  // namespace

void sddmm(const SddmmArgs& args) {
  const char* fn = "gsddmm";
  const CooView& g = args.edges;
  detail::check_coo(fn, g);
  const bool use_lhs = args.op != BinaryOp::CopyRhs;
  const bool use_rhs = args.op != BinaryOp::CopyLhs;
  const ArrayView none;
  const ArrayView& lhs = use_lhs ? args.lhs : none;
  const ArrayView& rhs = use_rhs ? args.rhs : none;

  detail::check_features(fn, "out", args.out);
  if (use_lhs) {
    check_target(fn, "lhs_target", args.lhs_target);
    detail::check_operand(fn, "lhs", args.op, lhs, args.out, target_rows(g, args.lhs_target),
                          target_what(args.lhs_target));
  }
  if (use_rhs) {
    check_target(fn, "rhs_target", args.rhs_target);
    detail::check_operand(fn, "rhs", args.op, rhs, args.out, target_rows(g, args.rhs_target),
                          target_what(args.rhs_target));
  }
  detail::check_rows(fn, "out", args.out, g.num_edges(), "the number of edges");

  const BcastInfo bcast = detail::check_out_bcast(fn, args.op, lhs, rhs, args.out);
  detail::check_same_device(fn,
                            {{"src", &g.src}, {"lhs", &lhs}, {"rhs", &rhs}, {"out", &args.out}});

  SddmmArgs checked = args;
  checked.lhs = lhs;
  checked.rhs = rhs;
  if (args.out.device.is_cuda())
    cuda::sddmm(checked, bcast);
  else
    cpu::sddmm(checked, bcast);
}

}  // namespace nodeweave::sparse
