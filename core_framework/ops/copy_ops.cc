// Copy (broadcasting, converting write into an existing tensor), Cast (clone / dtype change),
// ToDevice, Fill, and the creation functions built on them.
#include <cmath>

#include "core_framework/autograd/grad_mode.h"
#include "core_framework/ops/convert.h"
#include "core_framework/ops/elementwise_loop.h"
#include "core_framework/ops/op_helpers.h"
#include "core_framework/runtime/generator.h"

namespace nodeweave {

namespace {

// out = convert(src) broadcast to out's shape, for any pair of dtypes.
void convert_into(const Tensor& out, const Tensor& src) {
  NW_DISPATCH_ANY(out.dtype(), "copy", {
    using dst_t = scalar_t;
    NW_DISPATCH_ANY(src.dtype(), "copy", {
      elementwise_kernel<dst_t, scalar_t>(out, {src},
                                          [](scalar_t v) { return convert_value<dst_t>(v); });
    });
  });
}

// ---- Copy(self, src): the value of `src` broadcast to self's shape and dtype ----
std::vector<TensorMeta> copy_infer(const TensorList& in, const Attrs&) {
  Shape b = broadcast_shapes(in[0].shape(), in[1].shape(), "copy_");
  NW_CHECK(b == in[0].shape(), ValueError, "copy_: source of shape ", shape_str(in[1].shape()),
           " cannot be broadcast to destination shape ", shape_str(in[0].shape()));
  return {TensorMeta{in[0].shape(), in[0].dtype(), in[0].device()}};
}
void copy_cpu(const TensorList& in, const Attrs&, TensorList& out) { convert_into(out[0], in[1]); }
TensorList copy_backward(const GradCtx& c) { return {Tensor(), c.grad_outputs[0]}; }

// ---- Cast(x; dtype) ----
std::vector<TensorMeta> cast_infer(const TensorList& in, const Attrs& a) {
  return {TensorMeta{in[0].shape(), a.dtype(0), in[0].device()}};
}
void cast_cpu(const TensorList& in, const Attrs&, TensorList& out) { convert_into(out[0], in[0]); }
TensorList cast_backward(const GradCtx& c) { return {c.grad_outputs[0]}; }

// ---- ToDevice(x; type, index) ----
void to_device_kernel(const TensorList& in, const Attrs& a, TensorList& out) {
  Device dst{static_cast<DeviceType>(a.i(0)), static_cast<int32_t>(a.i(1))};
  Tensor src = in[0].is_contiguous() ? in[0] : contiguous(in[0]);
  Tensor r = empty(src.shape(), src.dtype(), dst);
  copy_bytes(r.data_ptr(), dst, src.data_ptr(), src.device(), src.numel() * src.itemsize());
  out = {r};
}
TensorList to_device_backward(const GradCtx& c) {
  return {to_device(c.grad_outputs[0], c.input_meta[0].device)};
}

// ---- Fill(self; value) ----
void fill_cpu(const TensorList& in, const Attrs& a, TensorList& out) {
  double v = a.f(0);
  NW_DISPATCH_ANY(out[0].dtype(), "fill_", {
    scalar_t sv = convert_value<scalar_t>(v);
    elementwise_kernel<scalar_t>(out[0], {}, [sv]() { return sv; });
  });
}

}  // namespace

void register_copy_ops() {
  define_op(OpKind::Copy, kElementwise | kInPlaceCapable, copy_infer, copy_cpu, copy_backward, 0);
  define_op(OpKind::Cast, kElementwise, cast_infer, cast_cpu, cast_backward, 0);
  OpDef& td =
      define_op(OpKind::ToDevice, kDynamicShape, nullptr, to_device_kernel, to_device_backward, 0);
  td.kernels[1] = to_device_kernel;
  define_op(OpKind::Fill, kElementwise | kInPlaceCapable, infer_like_input, fill_cpu, nullptr, 0);
}

Tensor cast(const Tensor& t, DType dtype) { return dispatch1(OpKind::Cast, {t}, {dtype}); }
Tensor clone(const Tensor& t) { return cast(t, t.dtype()); }
Tensor contiguous(const Tensor& t) { return t.is_contiguous() ? t : clone(t); }

Tensor to_device(const Tensor& t, Device device) {
  if (t.device() == device) return t;
  return dispatch1(OpKind::ToDevice, {t},
                   {static_cast<int64_t>(device.type), static_cast<int64_t>(device.index)});
}

Tensor& copy_(Tensor& dst, const Tensor& src) {
  if (src.device() != dst.device() && !(src.dim() == 0 && src.device().is_cpu())) {
    Tensor moved = to_device(src, dst.device());
    return dispatch_inplace(OpKind::Copy, dst, {moved});
  }
  return dispatch_inplace(OpKind::Copy, dst, {src});
}

Tensor& fill_(Tensor& t, double value) { return dispatch_inplace(OpKind::Fill, t, {}, {value}); }
Tensor& zero_(Tensor& t) { return fill_(t, 0.0); }

Tensor full(const Shape& shape, double value, DType dtype, Device device) {
  Tensor t = empty(shape, dtype, device);
  NoGradGuard guard;
  fill_(t, value);
  return t;
}
Tensor zeros(const Shape& shape, DType dtype, Device device) {
  return full(shape, 0.0, dtype, device);
}
Tensor ones(const Shape& shape, DType dtype, Device device) {
  return full(shape, 1.0, dtype, device);
}
Tensor zeros_like(const Tensor& t) { return zeros(t.shape(), t.dtype(), t.device()); }
Tensor ones_like(const Tensor& t) { return ones(t.shape(), t.dtype(), t.device()); }
Tensor full_like(const Tensor& t, double value) {
  return full(t.shape(), value, t.dtype(), t.device());
}

Tensor scalar_tensor(double value, DType dtype, Device device, bool wrapped) {
  Tensor t = empty({}, dtype, Device{});
  NW_DISPATCH_ANY(dtype, "scalar_tensor",
                  { *t.data<scalar_t>() = convert_value<scalar_t>(value); });
  t.impl()->wrapped_number = wrapped;
  return device.is_cpu() ? t : to_device(t, device);
}

// Fills a CPU tensor element by element from a function of the flat index, then moves it.
template <typename F>
static Tensor generate(const Shape& shape, DType dtype, Device device, const char* name, F f) {
  Tensor t = empty(shape, dtype, Device{});
  int64_t n = t.numel();
  NW_DISPATCH_ANY(dtype, name, {
    scalar_t* p = t.data<scalar_t>();
    parallel_for(0, n, kGrainSize, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) p[i] = convert_value<scalar_t>(f(i));
    });
  });
  return device.is_cpu() ? t : to_device(t, device);
}

Tensor arange(double start, double end, double step, DType dtype, Device device) {
  NW_CHECK(step != 0, ValueError, "arange: step must be nonzero");
  NW_CHECK(std::isfinite(start) && std::isfinite(end), ValueError,
           "arange: start and end must be finite");
  double span = (end - start) / step;
  int64_t n = span > 0 ? static_cast<int64_t>(std::ceil(span)) : 0;
  return generate({n}, dtype, device, "arange", [=](int64_t i) { return start + step * i; });
}

Tensor linspace(double start, double end, int64_t steps, DType dtype, Device device) {
  NW_CHECK(steps >= 0, ValueError, "linspace: steps must be non-negative, got ", steps);
  double step = steps > 1 ? (end - start) / (steps - 1) : 0.0;
  int64_t half = steps / 2;
  // Fill from both ends so the last value is exactly `end`, as NumPy does.
  return generate({steps}, dtype, device, "linspace", [=](int64_t i) {
    return i < half ? start + step * i : end - step * (steps - 1 - i);
  });
}

Tensor eye(int64_t n, int64_t m, DType dtype, Device device) {
  NW_CHECK(n >= 0 && m >= 0, ValueError, "eye: sizes must be non-negative, got (", n, ", ", m, ")");
  return generate({n, m}, dtype, device, "eye",
                  [=](int64_t i) { return i / m == i % m ? 1.0 : 0.0; });
}

Tensor rand(const Shape& shape, DType dtype, Device device) {
  NW_CHECK(is_floating(dtype), TypeError, "rand: dtype must be floating point, got ",
           dtype_name(dtype));
  uint64_t seed = default_generator().next_seed();
  return generate(shape, dtype, device, "rand", [=](int64_t i) { return uniform_at(seed, i); });
}

Tensor randn(const Shape& shape, DType dtype, Device device) {
  NW_CHECK(is_floating(dtype), TypeError, "randn: dtype must be floating point, got ",
           dtype_name(dtype));
  uint64_t seed = default_generator().next_seed();
  // Box-Muller on two counter-based uniforms per element.
  return generate(shape, dtype, device, "randn", [=](int64_t i) {
    double u1 = 1.0 - uniform_at(seed, 2 * static_cast<uint64_t>(i));
    double u2 = uniform_at(seed, 2 * static_cast<uint64_t>(i) + 1);
    return std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
  });
}

Tensor randint(int64_t low, int64_t high, const Shape& shape, DType dtype, Device device) {
  NW_CHECK(high > low, ValueError, "randint: expected low < high, got low=", low, ", high=", high);
  uint64_t seed = default_generator().next_seed();
  uint64_t range = static_cast<uint64_t>(high - low);
  return generate(shape, dtype, device, "randint", [=](int64_t i) {
    return static_cast<double>(
        low + static_cast<int64_t>(draw_at(seed, static_cast<uint64_t>(i)) % range));
  });
}

}  // namespace nodeweave

namespace nodeweave {

Tensor randperm(int64_t n, DType dtype, Device device) {
  NW_CHECK(n >= 0, ValueError, "randperm: n must be non-negative, got ", n);
  NW_CHECK(dtype == DType::Int64 || dtype == DType::Int32 || is_floating(dtype), TypeError,
           "randperm: unsupported dtype ", dtype_name(dtype));
  std::vector<int64_t> perm(n);
  for (int64_t i = 0; i < n; ++i) perm[i] = i;
  uint64_t seed = default_generator().next_seed();
  for (int64_t i = n - 1; i > 0; --i) {  // Fisher-Yates
    int64_t j = static_cast<int64_t>(draw_at(seed, static_cast<uint64_t>(i)) %
                                     static_cast<uint64_t>(i + 1));
    std::swap(perm[i], perm[j]);
  }
  return generate({n}, dtype, device, "randperm",
                  [&](int64_t i) { return static_cast<double>(perm[i]); });
}

}  // namespace nodeweave
