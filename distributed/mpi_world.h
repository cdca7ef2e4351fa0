// The MPI job this process belongs to (Open MPI from Debian; jobs start with mpirun or srun): its
// rank and size, and the collectives multi-process training needs, on host buffers. MPI is bound
// here in C++ rather than through mpi4py so that the distributed sampler and feature fetch can
// issue their per-hop exchanges from C++ loops without the GIL, and so that the GPU path (NCCL)
// can sit behind the same calls. Every call blocks until the job's ranks have all made it.
#pragma once
#include <cstdint>
#include <vector>

#include "core_framework/runtime/dtype.h"

namespace nodeweave::distributed {

struct MpiWorld {
  int rank = 0;
  int size = 1;
};

// Joins the MPI job (MPI_Init_thread, funneled: only the thread that called init talks to MPI).
// Without a launcher this is a job of one. Idempotent.
MpiWorld mpi_init();
bool mpi_is_initialized();
// Leaves the job (MPI_Finalize) if it was joined and not yet left; launchers report a rank that
// exits without it as failed.
void mpi_finalize();
MpiWorld mpi_world();  // RuntimeError before mpi_init

// In-place elementwise sum of `count` values of `dtype` (float32, float64, int32 or int64) over
// every rank; the result is the same bits on every rank.
void all_reduce_sum(void* data, int64_t count, DType dtype);

// Personalised all-to-all of byte blocks: block r of `send` (send_bytes[r] bytes, blocks back to
// back) goes to rank r; the result holds the blocks received, in rank order, and recv_bytes their
// sizes. Sizes are exchanged first, so receivers need not know them.
std::vector<uint8_t> all_to_all_bytes(const uint8_t* send, const std::vector<int64_t>& send_bytes,
                                      std::vector<int64_t>* recv_bytes);

void barrier();

// Ends every rank of the job (MPI_Abort): what a rank that failed does instead of finalising, since
// MPI_Finalize would wait for ranks that are themselves waiting for it in a collective.
[[noreturn]] void abort_job(int code);

}  // namespace nodeweave::distributed
