// nodeweave._C.distributed's MPI half (distributed/mpi_world.h): joining the job and the
// collectives, on NumPy buffers. The GIL is released while a call waits for the other ranks.
#include "distributed/mpi_world.h"
#include "graph_arrays.h"
#include "py_convert.h"

namespace nodeweave::py {

void bind_mpi(pyb::module_& m) {
  m.def(
      "mpi_init",
      [] {
        distributed::MpiWorld w;
        {
          pyb::gil_scoped_release nogil;
          w = distributed::mpi_init();
        }
        return pyb::make_tuple(w.rank, w.size);
      },
      "(rank, size) of the MPI job, joining it on the first call.");
  m.def("mpi_is_initialized", &distributed::mpi_is_initialized);
  m.def("mpi_finalize", [] {
    pyb::gil_scoped_release nogil;
    distributed::mpi_finalize();
  });
  m.def("mpi_world", [] {
    const auto w = distributed::mpi_world();
    return pyb::make_tuple(w.rank, w.size);
  });
  m.def(
      "all_reduce_sum",
      [](pyb::array arr) {
        NW_CHECK(arr.flags() & pyb::array::c_style, ValueError, "all_reduce: the array must be C-contiguous");
        NW_CHECK(arr.writeable(), ValueError, "all_reduce: the array must be writeable (it is summed in place)");
        DType t;
        const std::string name = pyb::str(arr.dtype());
        NW_CHECK(dtype_from_name(name, &t), ValueError, "all_reduce: unsupported dtype ", name);
        void* data = arr.mutable_data();
        const int64_t n = static_cast<int64_t>(arr.size());
        pyb::gil_scoped_release nogil;
        distributed::all_reduce_sum(data, n, t);
      },
      pyb::arg("array"), "Sums a C-contiguous NumPy array over every rank, in place.");
  m.def(
      "all_to_all_bytes",
      [](pyb::array_t<uint8_t, pyb::array::c_style> send, const std::vector<int64_t>& send_bytes) {
        int64_t total = 0;
        for (int64_t b : send_bytes) {
          NW_CHECK(b >= 0, ValueError, "all_to_all: block sizes must be >= 0, got ", b);
          total += b;
        }
        NW_CHECK(total == static_cast<int64_t>(send.size()), ValueError, "all_to_all: the blocks hold ", total,
                 " bytes but the buffer has ", send.size());
        std::vector<int64_t> recv_bytes;
        std::vector<uint8_t> out;
        {
          pyb::gil_scoped_release nogil;
          out = distributed::all_to_all_bytes(send.data(), send_bytes, &recv_bytes);
        }
        return pyb::make_tuple(owned_array(std::move(out)), recv_bytes);
      },
      pyb::arg("send"), pyb::arg("send_bytes"),
      "(received bytes, sizes per rank): block r of `send` (send_bytes[r] bytes) goes to rank r.");
  m.def("abort_job", [](int code) { distributed::abort_job(code); }, pyb::arg("code"));
  m.def("barrier", [] {
    pyb::gil_scoped_release nogil;
    distributed::barrier();
  });
}

}  // namespace nodeweave::py
