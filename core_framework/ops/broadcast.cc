#include "core_framework/ops/broadcast.h"

namespace nodeweave {

Shape broadcast_shapes(const Shape& a, const Shape& b, const char* op) {
  size_t n = std::max(a.size(), b.size());
  Shape out(n);
  for (size_t i = 0; i < n; ++i) {
    int64_t da = i < n - a.size() ? 1 : a[i - (n - a.size())];
    int64_t db = i < n - b.size() ? 1 : b[i - (n - b.size())];
    if (da != db && da != 1 && db != 1) {
      throw ValueError(str_cat(op, ": shapes ", shape_str(a), " and ", shape_str(b),
                               " cannot be broadcast together (dimension ", i, ": ", da, " vs ", db,
                               ")"));
    }
    out[i] = da == 1 ? db : da;
  }
  return out;
}

Shape broadcast_strides(const Tensor& t, const Shape& shape) {
  const Shape& ts = t.shape();
  const Shape& st = t.strides();
  size_t n = shape.size();
  size_t lead = n - ts.size();
  Shape out(n, 0);
  for (size_t i = 0; i < ts.size(); ++i) out[lead + i] = ts[i] == 1 ? 0 : st[i];
  return out;
}

}  // namespace nodeweave
