// Registration of the CUDA kernels, one entry point per kernel family file; register_cuda_kernels()
// (register_kernels.cu) calls each once, after the CPU ops have filled the op table.
#pragma once

namespace nodeweave::cuda {

void register_copy_kernels();    // Fill, Copy, Cast
void register_unary_kernels();   // Neg ... LogicalNot
void register_binary_kernels();  // Add ... LogicalXor, Where
void register_sum_kernel();      // Sum
void register_mm_kernel();       // Mm (cuBLAS)

}  // namespace nodeweave::cuda
