// Indexing ops from C++: values against hand-computed results, every strategy of the scatter
// kernels against a serial reference, error types, in-place version counters, gradients, the
// sparse embedding gradient and the strided-offset helper.
#include <gtest/gtest.h>

#include <vector>

#include "core_framework/autograd/engine.h"
#include "core_framework/autograd/grad_mode.h"
#include "core_framework/engine/functional.h"
#include "core_framework/ops/index_util.h"
#include "core_framework/runtime/parallel.h"

namespace nodeweave {
namespace {

template <typename T>
Tensor from_vec(const std::vector<T>& v, const Shape& shape) {
  Tensor t = empty(shape, DTypeOf<T>::value);
  for (size_t i = 0; i < v.size(); ++i) t.data<T>()[i] = v[i];
  return t;
}

template <typename T>
std::vector<T> to_vec(const Tensor& t) {
  Tensor c = contiguous(t);
  return std::vector<T>(c.data<T>(), c.data<T>() + c.numel());
}

TEST(IndexOps, IndexSelectOnTransposedInput) {
  Tensor x = from_vec<float>({0, 1, 2, 3, 4, 5}, {2, 3});
  Tensor xt = transpose(x, 0, 1);  // [[0, 3], [1, 4], [2, 5]], non-contiguous
  Tensor r = index_select(xt, 0, from_vec<int32_t>({2, 0, 2}, {3}));
  EXPECT_EQ(r.shape(), (Shape{3, 2}));
  EXPECT_EQ(to_vec<float>(r), (std::vector<float>{2, 5, 0, 3, 2, 5}));
  Tensor c = index_select(xt, -1, from_vec<int64_t>({1}, {1}));
  EXPECT_EQ(to_vec<float>(c), (std::vector<float>{3, 4, 5}));
}

TEST(IndexOps, GatherAndScatterAdd) {
  Tensor x = from_vec<double>({1, 2, 3, 4, 5, 6}, {2, 3});
  Tensor idx = from_vec<int64_t>({2, 0, 1, 1}, {2, 2});
  EXPECT_EQ(to_vec<double>(gather(x, 1, idx)), (std::vector<double>{3, 1, 5, 5}));
  Tensor s = scatter_add(zeros({2, 3}, DType::Float64), 1, idx, ones({2, 2}, DType::Float64));
  EXPECT_EQ(to_vec<double>(s), (std::vector<double>{1, 0, 1, 0, 2, 0}));
}

// Each size below makes index_add take a different parallel strategy (outer dim, feature dim,
// ranges of target rows); every one must equal the serial sum in index order.
TEST(IndexOps, IndexAddStrategiesMatchSerialReference) {
  struct Case {
    int64_t rows, feat, k, dim;
  };
  for (Case cs : {Case{4000, 100, 6000, 0}, Case{50000, 1, 120000, 0}, Case{30000, 3, 90000, 0},
                  Case{64, 1000, 3000, 1}}) {
    Shape xs = cs.dim == 0 ? Shape{cs.rows, cs.feat} : Shape{cs.feat, cs.rows};
    Tensor x = zeros(xs, DType::Int64);
    Shape ss = xs;
    ss[cs.dim] = cs.k;
    Tensor src = randint(-5, 5, ss, DType::Int64);
    Tensor idx = randint(0, cs.rows, {cs.k}, DType::Int64);
    Tensor r = index_add(x, cs.dim, idx, src, 2.0);
    std::vector<int64_t> ref(shape_numel(xs), 0);
    const int64_t* ip = idx.data<int64_t>();
    const int64_t* sp = src.data<int64_t>();
    for (int64_t k = 0; k < cs.k; ++k) {
      for (int64_t f = 0; f < cs.feat; ++f) {
        if (cs.dim == 0)
          ref[ip[k] * cs.feat + f] += 2 * sp[k * cs.feat + f];
        else
          ref[f * cs.rows + ip[k]] += 2 * sp[f * cs.k + k];
      }
    }
    EXPECT_EQ(to_vec<int64_t>(r), ref) << "rows=" << cs.rows << " feat=" << cs.feat;
  }
}

TEST(IndexOps, OutOfRangeAndNegativeIndicesThrowBeforeWriting) {
  Tensor x = zeros({3, 2});
  Tensor before = clone(x);
  EXPECT_THROW(index_select(x, 0, from_vec<int64_t>({0, 3}, {2})), IndexError);
  EXPECT_THROW(index_select(x, 0, from_vec<int64_t>({-1}, {1})), IndexError);
  EXPECT_THROW(index_add_(x, 0, from_vec<int64_t>({1, 7}, {2}), ones({2, 2})), IndexError);
  EXPECT_EQ(to_vec<float>(x), to_vec<float>(before));  // nothing written
  EXPECT_THROW(gather(x, 0, from_vec<float>({0}, {1, 1})), TypeError);
  EXPECT_THROW(index_select(x, 2, from_vec<int64_t>({0}, {1})), IndexError);
  EXPECT_THROW(masked_fill(x, zeros({3, 2}), 1.0), TypeError);
  EXPECT_THROW(index_add(x, 0, from_vec<int64_t>({0}, {1}), ones({1, 3})), ValueError);
}

TEST(IndexOps, InPlaceBumpsVersionAndWritesThroughViews) {
  Tensor base = zeros({2, 3});
  Tensor view_t = transpose(base, 0, 1);  // (3, 2) view of base
  int64_t v0 = base.version();
  index_copy_(view_t, 0, from_vec<int64_t>({2}, {1}), full({1, 2}, 7.0));
  EXPECT_EQ(base.version(), v0 + 1);
  EXPECT_EQ(to_vec<float>(base), (std::vector<float>{0, 0, 7, 0, 0, 7}));
  masked_fill_(base, from_vec<bool>({true, false, false}, {3}), -1.0);
  EXPECT_EQ(to_vec<float>(base), (std::vector<float>{-1, 0, 7, -1, 0, 7}));
  EXPECT_EQ(base.version(), v0 + 2);
}

TEST(IndexOps, GradientOfGatherIsScatterAdd) {
  Tensor x = from_vec<double>({1, 2, 3}, {3});
  x.set_requires_grad(true);
  Tensor idx = from_vec<int64_t>({0, 0, 2}, {3});
  Tensor y = sum(mul(gather(x, 0, idx), from_vec<double>({1, 10, 100}, {3})));
  backward({y}, {}, false, false);
  EXPECT_EQ(to_vec<double>(x.grad()), (std::vector<double>{11, 0, 100}));
}

TEST(IndexOps, MaskedSelectAndNonzero) {
  Tensor x = from_vec<int32_t>({0, 5, 0, 7, 8, 0}, {2, 3});
  Tensor nz = nonzero(x);
  EXPECT_EQ(nz.shape(), (Shape{3, 2}));
  EXPECT_EQ(to_vec<int64_t>(nz), (std::vector<int64_t>{0, 1, 1, 0, 1, 1}));
  Tensor sel = masked_select(x, from_vec<bool>({true, false, true}, {3}));  // mask broadcasts
  EXPECT_EQ(to_vec<int32_t>(sel), (std::vector<int32_t>{0, 0, 7, 0}));
}

TEST(IndexOps, EmbeddingSparseGradSumsRepeatedRows) {
  Tensor g = from_vec<float>({1, 2, 3, 4, 5, 6}, {3, 2});
  Tensor idx = from_vec<int32_t>({4, 1, 4}, {3});
  auto [ids, rows] = embedding_sparse_grad(g, idx, 6);
  EXPECT_EQ(to_vec<int64_t>(ids), (std::vector<int64_t>{1, 4}));
  EXPECT_EQ(to_vec<float>(rows), (std::vector<float>{3, 4, 6, 8}));
  EXPECT_THROW(embedding_sparse_grad(g, idx, 4), IndexError);
  EXPECT_THROW(embedding_sparse_grad(g, from_vec<int64_t>({0, 1}, {2}), 4), ValueError);
}

TEST(IndexOps, TensorIndexAdvancedAndPut) {
  Tensor x = from_vec<float>({0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}, {3, 4});
  Tensor rows = from_vec<int64_t>({2, -3}, {2});
  Tensor cols = from_vec<int32_t>({1, 3}, {2});
  Tensor r = tensor_index(x, {TensorIndex::of(rows), TensorIndex::of(cols)});
  EXPECT_EQ(to_vec<float>(r), (std::vector<float>{9, 3}));
  Tensor s = tensor_index(x, {TensorIndex::slice(0, 3, 2), TensorIndex::integer(-1)});
  EXPECT_EQ(to_vec<float>(s), (std::vector<float>{3, 11}));
  tensor_index_put_(x, {TensorIndex::of(rows), TensorIndex::of(cols)},
                    scalar_tensor(-1, DType::Float32));
  EXPECT_EQ(x.data<float>()[9], -1);
  EXPECT_EQ(x.data<float>()[3], -1);
  EXPECT_THROW(tensor_index(x, {TensorIndex::integer(3)}), IndexError);
}

TEST(IndexOps, GroupDimsMergesOrTabulates) {
  DimGroup merged = group_dims({2, 3, 4}, {12, 4, 1}, 1, 3);
  EXPECT_TRUE(merged.table.empty());
  EXPECT_EQ(merged.size, 12);
  EXPECT_EQ(merged.at(5), 5);
  DimGroup table = group_dims({3, 2}, {1, 3}, 0, 2);  // transposed: no single stride
  ASSERT_EQ(table.table.size(), 6u);
  EXPECT_EQ(table.table, (std::vector<int64_t>{0, 3, 1, 4, 2, 5}));
}

}  // namespace
}  // namespace nodeweave
