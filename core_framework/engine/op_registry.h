// Registration entry points, one per op family file; register_all_ops() calls each once. Explicit
// calls (no static registrars) so nothing depends on the linker keeping unreferenced objects.
#pragma once

namespace nodeweave {

void register_all_ops();
void register_copy_ops();
void register_unary_ops();
void register_binary_ops();
void register_reduce_ops();
void register_softmax_ops();
void register_linalg_ops();
void register_view_ops();
void register_join_ops();
void register_index_ops();
void register_sort_ops();
void register_misc_ops();
// CUDA builds add their kernels to existing entries (no-op without CUDA).
void register_cuda_kernels();

}  // namespace nodeweave
