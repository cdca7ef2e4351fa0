#include "distributed/mpi_world.h"

#include <dlfcn.h>
#include <mpi.h>

#include <climits>
#include <cstdlib>
#include <numeric>
#include <stdexcept>

#include "core_framework/runtime/error.h"

namespace nodeweave::distributed {
namespace {

void check(int rc, const char* what) {
  if (rc == MPI_SUCCESS) return;
  char msg[MPI_MAX_ERROR_STRING];
  int len = 0;
  MPI_Error_string(rc, msg, &len);
  throw std::runtime_error(str_cat(what, " failed: ", std::string(msg, len)));
}

// Python loads the extension, and with it libmpi, without RTLD_GLOBAL; Open MPI's plugins are
// shared objects that expect libmpi's symbols to be global. Promote the already loaded library.
void make_libmpi_global() {
  Dl_info info;
  if (dladdr(reinterpret_cast<void*>(&MPI_Init_thread), &info) && info.dli_fname)
    dlopen(info.dli_fname, RTLD_NOW | RTLD_GLOBAL | RTLD_NOLOAD);
}

MPI_Datatype mpi_type(DType t) {
  switch (t) {
    case DType::Float32: return MPI_FLOAT;
    case DType::Float64: return MPI_DOUBLE;
    case DType::Int32: return MPI_INT32_T;
    case DType::Int64: return MPI_INT64_T;
    default:
      throw ValueError(str_cat("all_reduce_sum: dtype must be float32, float64, int32 or int64, got ",
                               dtype_name(t)));
  }
}

int as_count(int64_t n, const char* what) {
  NW_CHECK(n >= 0 && n <= INT_MAX, ValueError, what, " must be in [0, 2^31 - 1] per message, got ", n);
  return static_cast<int>(n);
}

}  // namespace

bool mpi_is_initialized() {
  int flag = 0;
  MPI_Initialized(&flag);
  return flag != 0;
}

void mpi_finalize() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (mpi_is_initialized() && !finalized) MPI_Finalize();
}

MpiWorld mpi_init() {
  if (!mpi_is_initialized()) {
    make_libmpi_global();
    int provided = 0;
    check(MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided), "MPI_Init_thread");
    // Errors come back as return codes (turned into exceptions above), not as a job abort.
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  }
  return mpi_world();
}

MpiWorld mpi_world() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!mpi_is_initialized() || finalized) throw std::runtime_error("MPI is not initialised (or already finalised)");
  MpiWorld w;
  check(MPI_Comm_rank(MPI_COMM_WORLD, &w.rank), "MPI_Comm_rank");
  check(MPI_Comm_size(MPI_COMM_WORLD, &w.size), "MPI_Comm_size");
  return w;
}

void all_reduce_sum(void* data, int64_t count, DType dtype) {
  MPI_Datatype t = mpi_type(dtype);
  const int n = as_count(count, "all_reduce_sum: the element count");
  mpi_world();
  if (n == 0) return;
  check(MPI_Allreduce(MPI_IN_PLACE, data, n, t, MPI_SUM, MPI_COMM_WORLD), "MPI_Allreduce");
}

std::vector<uint8_t> all_to_all_bytes(const uint8_t* send, const std::vector<int64_t>& send_bytes,
                                      std::vector<int64_t>* recv_bytes) {
  const MpiWorld w = mpi_world();
  NW_CHECK(static_cast<int>(send_bytes.size()) == w.size, ValueError,
           "all_to_all: one block per rank is needed (", w.size, "), got ", send_bytes.size());
  std::vector<int> scount(w.size), sdispl(w.size), rcount(w.size), rdispl(w.size);
  int64_t off = 0;
  for (int r = 0; r < w.size; ++r) {
    scount[r] = as_count(send_bytes[r], "all_to_all: a block's size in bytes");
    sdispl[r] = as_count(off, "all_to_all: the bytes sent");
    off += send_bytes[r];
  }
  check(MPI_Alltoall(scount.data(), 1, MPI_INT, rcount.data(), 1, MPI_INT, MPI_COMM_WORLD), "MPI_Alltoall");
  int64_t total = 0;
  for (int r = 0; r < w.size; ++r) {
    rdispl[r] = as_count(total, "all_to_all: the bytes received");
    total += rcount[r];
  }
  std::vector<uint8_t> out(static_cast<size_t>(total));
  check(MPI_Alltoallv(send, scount.data(), sdispl.data(), MPI_BYTE, out.data(), rcount.data(), rdispl.data(),
                      MPI_BYTE, MPI_COMM_WORLD),
        "MPI_Alltoallv");
  recv_bytes->assign(rcount.begin(), rcount.end());
  return out;
}

void abort_job(int code) {
  MPI_Abort(MPI_COMM_WORLD, code);
  std::abort();  // MPI_Abort does not return; this keeps [[noreturn]] honest if it ever did
}

void barrier() {
  mpi_world();
  check(MPI_Barrier(MPI_COMM_WORLD), "MPI_Barrier");
}

}  // namespace nodeweave::distributed
