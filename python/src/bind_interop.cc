// Zero-copy exchange through DLPack, per the Python array API standard: Tensor.__dlpack__ and
// __dlpack_device__ (producer), from_dlpack (consumer), plus the CUDA runtime controls behind
// nodeweave.core.cuda (device count, caching-allocator statistics, empty_cache, synchronize).
#include <string>
#include <vector>

#include "core_framework/runtime/dlpack.h"
#include "py_convert.h"
#ifdef NODEWEAVE_WITH_CUDA
#include "core_framework/cuda/cuda_api.h"
#endif

namespace nodeweave::py {

namespace {

constexpr const char* kLegacyName = "dltensor";
constexpr const char* kVersionedName = "dltensor_versioned";
constexpr const char* kUsedLegacyName = "used_dltensor";
constexpr const char* kUsedVersionedName = "used_dltensor_versioned";

// "numpy.ndarray", "torch.Tensor": several libraries call their class Tensor.
std::string qualified_type_name(pyb::handle obj) {
  pyb::handle type = pyb::type::handle_of(obj);
  std::string module = pyb::str(pyb::getattr(type, "__module__", pyb::str("")));
  std::string name = pyb::str(type.attr("__qualname__"));
  return module.empty() || module == "builtins" ? name : module + "." + name;
}

[[noreturn]] void throw_buffer_error(const std::string& msg) {
  PyErr_SetString(PyExc_BufferError, msg.c_str());
  throw pyb::error_already_set();
}

// Whether this process can hold tensors on the DLPack device; raises BufferError naming it if not.
Device check_importable_device(int32_t type, int32_t id, const char* what) {
  if (type == kDLCPU) return Device{};
  if (type == kDLCUDA) {
    const std::string name = dl_device_name(type, id);
    if (!cuda_built()) {
      throw_buffer_error(
          str_cat("from_dlpack: ", what, " is on ", name,
                  ", but this nodeweave build has no CUDA support; copy it to the CPU "
                  "first (e.g. x.cpu())"));
    }
    if (id < 0 || id >= cuda_device_count()) {
      throw_buffer_error(str_cat("from_dlpack: ", what, " is on ", name, ", but only ",
                                 cuda_device_count(), " CUDA device(s) are visible to nodeweave"));
    }
    return Device{DeviceType::CUDA, id};
  }
  throw_buffer_error(str_cat("from_dlpack: ", what, " is on device ", dl_device_name(type, id),
                             "; nodeweave tensors live on the CPU or on CUDA devices only"));
}

// ---------------------------------------------------------------------------------------------
// Producer.

// Owns what the consumer reads: the storage (kept alive until the consumer calls the deleter) and
// the shape/strides arrays DLTensor points into.
template <typename Managed>
struct ExportHolder {
  Managed managed{};
  StoragePtr storage;
  std::vector<int64_t> shape;
  std::vector<int64_t> strides;
};

template <typename Managed>
void export_deleter(Managed* self) {
  // May run on any thread, with or without the GIL: dropping the storage reference needs neither
  // (a storage that wraps a Python object takes the GIL in its own deleter).
  delete static_cast<ExportHolder<Managed>*>(self->manager_ctx);
}

template <typename Managed>
Managed* export_tensor(const Tensor& t) {
  auto* h = new ExportHolder<Managed>();
  h->storage = t.storage();
  h->shape = t.shape();
  h->strides = t.strides();
  DLTensor& dl = h->managed.dl_tensor;
  // data is the first element and byte_offset 0, as PyTorch and NumPy export: some consumers
  // still ignore byte_offset.
  dl.data = t.data_ptr();
  dl.device = to_dl_device(t.device());
  dl.ndim = static_cast<int32_t>(t.dim());
  dl.dtype = to_dl_dtype(t.dtype());
  dl.shape = h->shape.data();
  dl.strides = h->strides.data();
  dl.byte_offset = 0;
  h->managed.manager_ctx = h;
  h->managed.deleter = &export_deleter<Managed>;
  return &h->managed;
}

// A capsule still carrying its original name was never consumed and still owns the tensor; a
// consumer renames it ("used_...") when it takes ownership, and then this must not free anything.
template <typename Managed>
void capsule_destructor(PyObject* capsule, const char* name) {
  if (!PyCapsule_IsValid(capsule, name)) return;
  auto* m = static_cast<Managed*>(PyCapsule_GetPointer(capsule, name));
  if (m && m->deleter) {
    // The destructor can run while an exception is propagating; keep it intact.
    PyObject *type, *value, *tb;
    PyErr_Fetch(&type, &value, &tb);
    m->deleter(m);
    PyErr_Restore(type, value, tb);
  }
}
void legacy_capsule_destructor(PyObject* c) { capsule_destructor<DLManagedTensor>(c, kLegacyName); }
void versioned_capsule_destructor(PyObject* c) {
  capsule_destructor<DLManagedTensorVersioned>(c, kVersionedName);
}

// A (major, minor) or (device_type, device_id) pair of ints; raises TypeError naming `fn` and
// `arg`.
std::pair<int64_t, int64_t> int_pair(pyb::handle obj, const char* fn, const char* arg,
                                     const char* what) {
  if (pyb::isinstance<pyb::tuple>(obj) || pyb::isinstance<pyb::list>(obj)) {
    pyb::sequence seq = pyb::reinterpret_borrow<pyb::sequence>(obj);
    if (seq.size() == 2 && PyIndex_Check(seq[0].ptr()) && PyIndex_Check(seq[1].ptr()) &&
        !PyBool_Check(seq[0].ptr()) && !PyBool_Check(seq[1].ptr())) {
      return {pyb::int_(seq[0]).cast<int64_t>(), pyb::int_(seq[1]).cast<int64_t>()};
    }
  }
  throw TypeError(str_cat(fn, ": ", arg, " must be a ", what, " tuple of two ints, got ",
                          std::string(pyb::repr(obj))));
}

pyb::object tensor_dlpack(const Tensor& self, pyb::object stream, pyb::object max_version,
                          pyb::object dl_device, pyb::object copy) {
  const Device dev = self.device();
  const DLDevice mine = to_dl_device(dev);

  bool versioned = false;
  if (!max_version.is_none()) {
    auto [major, minor] = int_pair(max_version, "__dlpack__", "max_version", "(major, minor)");
    (void)minor;
    // We produce DLPack 1.0. A consumer that understands 1.x or newer gets a versioned capsule
    // (it must check the version it receives); older consumers get the legacy one.
    versioned = major >= 1;
  }

  if (!dl_device.is_none()) {
    auto [type, id] = int_pair(dl_device, "__dlpack__", "dl_device", "(device_type, device_id)");
    if (type != mine.device_type || id != mine.device_id) {
      throw_buffer_error(str_cat(
          "__dlpack__: dl_device=(", type, ", ", id, ") (",
          dl_device_name(static_cast<int32_t>(type), static_cast<int32_t>(id)),
          ") was requested, but the tensor is on ", dev.str(), " (",
          static_cast<int>(mine.device_type), ", ", mine.device_id, "); move it with .to() first"));
    }
  }

  bool force_copy = false;
  if (!copy.is_none()) {
    if (!PyBool_Check(copy.ptr())) {
      throw TypeError(str_cat("__dlpack__: copy must be None, True or False, got ",
                              std::string(pyb::repr(copy))));
    }
    force_copy = copy.ptr() == Py_True;
  }

  int64_t stream_value = 0;
  const bool has_stream = !stream.is_none();
  if (has_stream) {
    if (!PyLong_Check(stream.ptr()) || PyBool_Check(stream.ptr())) {
      throw TypeError(
          str_cat("__dlpack__: stream must be None or an int, got ", type_name(stream)));
    }
    stream_value = stream.cast<int64_t>();
  }
  if (dev.is_cpu()) {
    NW_CHECK(!has_stream || stream_value == -1, ValueError,
             "__dlpack__: stream must be None for a CPU tensor, got ", stream_value);
  } else {
    NW_CHECK(
        stream_value != 0 || !has_stream, ValueError,
        "__dlpack__: stream=0 is ambiguous for CUDA (the DLPack standard disallows it); pass 1 for "
        "the legacy default stream or 2 for the per-thread default stream");
    NW_CHECK(!has_stream || stream_value >= -1, ValueError, "__dlpack__: invalid CUDA stream ",
             stream_value);
  }

  if (self.requires_grad()) {
    throw_buffer_error(
        "__dlpack__: can't export a tensor that requires grad (the consumer would bypass "
        "autograd); "
        "export tensor.detach() instead");
  }

  Tensor t = force_copy ? clone(self) : self;

#ifdef NODEWEAVE_WITH_CUDA
  // stream=None means the consumer uses the legacy default stream, where nodeweave queues all of
  // its work, so nothing needs to wait; -1 asks for no synchronization at all.
  if (dev.is_cuda() && has_stream && stream_value != -1)
    cuda::make_stream_wait(dev.index, stream_value);
#endif

  PyObject* capsule = nullptr;
  if (versioned) {
    DLManagedTensorVersioned* m = export_tensor<DLManagedTensorVersioned>(t);
    m->version.major = kDLPackMajor;
    m->version.minor = kDLPackMinor;
    m->flags = force_copy ? DLPACK_FLAG_BITMASK_IS_COPIED : 0;
    capsule = PyCapsule_New(m, kVersionedName, versioned_capsule_destructor);
    if (!capsule) {
      m->deleter(m);
      throw pyb::error_already_set();
    }
  } else {
    DLManagedTensor* m = export_tensor<DLManagedTensor>(t);
    capsule = PyCapsule_New(m, kLegacyName, legacy_capsule_destructor);
    if (!capsule) {
      m->deleter(m);
      throw pyb::error_already_set();
    }
  }
  return pyb::reinterpret_steal<pyb::object>(capsule);
}

// ---------------------------------------------------------------------------------------------
// Consumer.

// Takes ownership of a DLPack managed tensor (legacy or versioned) whose capsule has already been
// renamed, and views its memory as a Tensor. The storage's deleter hands the memory back.
template <typename Managed>
Tensor wrap_managed(Managed* m, Device device, DType dtype) {
  const DLTensor& dl = m->dl_tensor;
  const int64_t ndim = dl.ndim;
  Shape shape(dl.shape, dl.shape + ndim);
  Shape strides = dl.strides ? Shape(dl.strides, dl.strides + ndim) : contiguous_strides(shape);
  // The element extent reachable from the first element, so the storage covers exactly that.
  int64_t lo = 0, hi = 0;
  bool empty_tensor = false;
  for (int64_t i = 0; i < ndim; ++i) {
    if (shape[i] == 0) empty_tensor = true;
    int64_t span = (shape[i] - 1) * strides[i];
    (span < 0 ? lo : hi) += span;
  }
  const int64_t item = static_cast<int64_t>(dtype_size(dtype));
  char* first = static_cast<char*>(dl.data) + dl.byte_offset;
  const size_t nbytes = empty_tensor ? 0 : static_cast<size_t>((hi - lo + 1) * item);

  auto deleter = [m]() {
    if (!m->deleter) return;
    // The producer's deleter may touch Python objects (NumPy's does), and the last tensor may die
    // on a thread that does not hold the GIL. After interpreter shutdown there is no Python left
    // to call into, so the memory is left to the process exit instead.
    if (!Py_IsInitialized()) return;
    PyGILState_STATE gil = PyGILState_Ensure();
    PyObject *type, *value, *tb;
    PyErr_Fetch(&type, &value, &tb);
    m->deleter(m);
    PyErr_Restore(type, value, tb);
    PyGILState_Release(gil);
  };
  StoragePtr storage;
  try {
    storage = std::make_shared<Storage>(first + lo * item, nbytes, device, deleter);
  } catch (...) {
    deleter();  // the capsule is already consumed: nobody else will free it
    throw;
  }
  auto impl = std::make_shared<TensorImpl>();
  impl->storage = std::move(storage);
  impl->shape = std::move(shape);
  impl->strides = std::move(strides);
  impl->offset = -lo;
  impl->dtype = dtype;
  return Tensor(impl);
}

// Validates everything before consuming, so a rejected capsule still owns its tensor and its own
// destructor frees it. Returns the tensor and whether the producer marked it read-only.
template <typename Managed>
Tensor consume_capsule(PyObject* capsule, const char* name, const char* used_name,
                       bool* read_only) {
  auto* m = static_cast<Managed*>(PyCapsule_GetPointer(capsule, name));
  if (!m) throw pyb::error_already_set();
  *read_only = false;
  if constexpr (std::is_same_v<Managed, DLManagedTensorVersioned>) {
    if (m->version.major > kDLPackMajor) {
      throw_buffer_error(str_cat("from_dlpack: the producer exported DLPack ", m->version.major,
                                 ".", m->version.minor, ", but nodeweave understands DLPack ",
                                 kDLPackMajor, ".x only"));
    }
    *read_only = (m->flags & DLPACK_FLAG_BITMASK_READ_ONLY) != 0;
  }
  const DLTensor& dl = m->dl_tensor;
  DType dtype;
  if (!from_dl_dtype(dl.dtype, &dtype)) {
    throw TypeError(str_cat("from_dlpack: unsupported dtype ", dl_dtype_name(dl.dtype),
                            " (DLPack code ", static_cast<int>(dl.dtype.code), ", ",
                            static_cast<int>(dl.dtype.bits),
                            " bits); nodeweave supports bool, uint8, int8, int32, int64, float16, "
                            "bfloat16, float32 and float64"));
  }
  const Device device =
      check_importable_device(dl.device.device_type, dl.device.device_id, "the tensor");
  NW_CHECK(dl.ndim >= 0, ValueError, "from_dlpack: invalid ndim ", dl.ndim);
  NW_CHECK(dl.ndim == 0 || dl.shape, ValueError, "from_dlpack: the DLTensor has ndim ", dl.ndim,
           " but no shape");
  for (int32_t i = 0; i < dl.ndim; ++i) {
    NW_CHECK(dl.shape[i] >= 0, ValueError, "from_dlpack: negative size ", dl.shape[i],
             " in dimension ", i);
  }
  if (PyCapsule_SetName(capsule, used_name) != 0) throw pyb::error_already_set();
  return wrap_managed(m, device, dtype);
}

Tensor from_dlpack(pyb::object x, pyb::object copy) {
  bool force_copy = false, forbid_copy = false;
  if (!copy.is_none()) {
    if (!PyBool_Check(copy.ptr())) {
      throw TypeError(str_cat("from_dlpack: copy must be None, True or False, got ",
                              std::string(pyb::repr(copy))));
    }
    force_copy = copy.ptr() == Py_True;
    forbid_copy = !force_copy;
  }

  pyb::object capsule;
  if (PyCapsule_CheckExact(x.ptr())) {
    capsule = x;
  } else if (pyb::hasattr(x, "__dlpack__")) {
    pyb::dict kwargs;
    if (pyb::hasattr(x, "__dlpack_device__")) {
      pyb::object dev;
      try {
        dev = x.attr("__dlpack_device__")();
      } catch (pyb::error_already_set& e) {
        // PyTorch, for one, raises for devices DLPack cannot describe ('meta').
        throw_buffer_error(str_cat("from_dlpack: x (", qualified_type_name(x),
                                   ") is on a device DLPack "
                                   "cannot describe: ",
                                   std::string(pyb::str(e.type().attr("__name__"))), ": ",
                                   std::string(pyb::str(e.value()))));
      }
      auto [type, id] =
          int_pair(dev, "from_dlpack", "x.__dlpack_device__()", "(device_type, device_id)");
      Device d = check_importable_device(static_cast<int32_t>(type), static_cast<int32_t>(id), "x");
      // We read the memory on the legacy default stream, which is DLPack stream 1.
      if (d.is_cuda()) kwargs["stream"] = 1;
    }
    pyb::object dlpack = x.attr("__dlpack__");
    try {
      capsule =
          dlpack(pyb::arg("max_version") = pyb::make_tuple(kDLPackMajor, kDLPackMinor), **kwargs);
    } catch (pyb::error_already_set& e) {
      // Producers written before DLPack 1.0 do not know max_version.
      if (!e.matches(PyExc_TypeError)) throw;
      capsule = dlpack(**kwargs);
    }
    if (!PyCapsule_CheckExact(capsule.ptr())) {
      throw TypeError(str_cat("from_dlpack: ", qualified_type_name(x), ".__dlpack__() returned ",
                              type_name(capsule), ", not a DLPack capsule"));
    }
  } else {
    throw TypeError(
        str_cat("from_dlpack: x must support the DLPack protocol (__dlpack__) or be a DLPack "
                "capsule, got ",
                qualified_type_name(x)));
  }

  PyObject* cap = capsule.ptr();
  const char* name = PyCapsule_GetName(cap);
  if (!name && PyErr_Occurred()) throw pyb::error_already_set();
  const std::string cap_name = name ? name : "";
  Tensor t;
  bool read_only = false;
  if (cap_name == kVersionedName) {
    t = consume_capsule<DLManagedTensorVersioned>(cap, kVersionedName, kUsedVersionedName,
                                                  &read_only);
  } else if (cap_name == kLegacyName) {
    t = consume_capsule<DLManagedTensor>(cap, kLegacyName, kUsedLegacyName, &read_only);
  } else if (cap_name == kUsedLegacyName || cap_name == kUsedVersionedName) {
    throw ValueError(
        str_cat("from_dlpack: the DLPack capsule was already consumed (its name is '", cap_name,
                "'); a capsule can be consumed only once, so call x.__dlpack__() again"));
  } else {
    throw TypeError(
        str_cat("from_dlpack: expected a capsule named 'dltensor' or 'dltensor_versioned', got "
                "one named '",
                cap_name, "'"));
  }
  if (read_only && forbid_copy) {
    throw_buffer_error(
        "from_dlpack: the producer marked its memory read-only, and nodeweave tensors are always "
        "writable, so importing it needs a copy, but copy=False was passed");
  }
  // Read-only memory is copied rather than wrapped: a wrapped tensor could be written through.
  if (force_copy || read_only) return clone(t);
  return t;
}

// ---------------------------------------------------------------------------------------------
// CUDA runtime controls; without a device, or without CUDA support, they see nothing to do.

Allocator* cuda_allocator_arg(int index, const char* fn) {
  const int n = cuda_device_count();
  NW_CHECK(index >= 0 && index < n, ValueError, fn, ": device cuda:", index, " is not available (",
           n, " CUDA device(s) are visible)");
  return get_allocator(Device{DeviceType::CUDA, index});
}

}  // namespace

void bind_interop(pyb::module_& m) {
  auto cls = pyb::reinterpret_borrow<pyb::class_<Tensor>>(m.attr("Tensor"));
  cls.def("__dlpack__", &tensor_dlpack, pyb::kw_only(), pyb::arg("stream") = pyb::none(),
          pyb::arg("max_version") = pyb::none(), pyb::arg("dl_device") = pyb::none(),
          pyb::arg("copy") = pyb::none(),
          "Exports the tensor as a DLPack capsule (Python array API standard): a versioned\n"
          "'dltensor_versioned' capsule (DLPack 1.0) when max_version >= (1, 0), else a legacy\n"
          "'dltensor' one. The consumer shares the tensor's memory unless copy=True.\n"
          "Tensors that require grad are not exported (BufferError): export t.detach().");
  cls.def(
      "__dlpack_device__",
      [](const Tensor& t) {
        DLDevice d = to_dl_device(t.device());
        return pyb::make_tuple(static_cast<int>(d.device_type), static_cast<int>(d.device_id));
      },
      "The (DLPack device type, device id) pair: (1, 0) for the CPU, (2, N) for cuda:N.");

  m.def(
      "from_dlpack", &from_dlpack, pyb::arg("x"), pyb::kw_only(), pyb::arg("copy") = pyb::none(),
      "Views memory exported through DLPack as a tensor, without copying.\n\n"
      "x is any object with __dlpack__ (NumPy arrays, torch tensors, nodeweave tensors, ...) or a\n"
      "DLPack capsule, which is consumed (a capsule can be imported once). The tensor keeps the\n"
      "producer's memory alive and reports the producer's address as data_ptr().\n\n"
      "copy=None (default) shares memory when possible; copy=True always copies; copy=False never\n"
      "copies. Memory the producer marks read-only (e.g. a NumPy array with writeable=False) is\n"
      "copied, because nodeweave tensors are writable; with copy=False that raises BufferError.\n"
      "Unsupported dtypes (complex, uint16, ...) raise TypeError; memory on devices nodeweave "
      "cannot\n"
      "use (another accelerator, or CUDA in a CPU-only build) raises BufferError.");

  m.def(
      "_cuda_memory_stats",
      [](int index) {
        Allocator* a = cuda_allocator_arg(index, "memory_allocated");
        return pyb::make_tuple(a->bytes_in_use(), a->bytes_cached());
      },
      pyb::arg("device"));
  m.def(
      "_cuda_empty_cache",
      [](int index) { cuda_allocator_arg(index, "empty_cache")->empty_cache(); },
      pyb::arg("device"));
  m.def(
      "_cuda_synchronize",
      [](int index) {
        cuda_allocator_arg(index, "synchronize");
#ifdef NODEWEAVE_WITH_CUDA
        pyb::gil_scoped_release release;
        cuda::synchronize(index);
#endif
      },
      pyb::arg("device"));
}

}  // namespace nodeweave::py
