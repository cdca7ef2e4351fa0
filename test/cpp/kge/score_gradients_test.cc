// Every model's hand-written gradient against central finite differences of its score in float64,
// through the batch kernels (positives and chunked negatives, heads and tails corrupted), and a
// few scores worked out by hand.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "core_framework/runtime/error.h"
#include "sparse/kge/triple_scores.h"

namespace nodeweave::kge {
namespace {

struct Problem {
  ScoreSpec spec;
  std::vector<double> ent, rel;
  int64_t ne = 7, nr = 3;
  std::vector<int64_t> h = {0, 1, 2, 3}, r = {0, 1, 2, 1}, t = {4, 5, 6, 0};
  std::vector<int64_t> negs = {1, 5, 6, 2, 3, 4};  // 2 chunks of 2 triples x 3 negatives
  Tables<double> tables() const { return {ent.data(), ne, rel.data(), nr}; }
  Triples triples() const { return {h.data(), r.data(), t.data(), 4}; }
  NegativeSpec negatives(Corrupt c) const { return {2, negs.data(), 3, c}; }
};

Problem make(Model m, int64_t dim) {
  Problem p;
  p.spec = {m, dim, 3.0};
  std::mt19937_64 gen(42);
  std::uniform_real_distribution<double> u(-1, 1);
  p.ent.resize(static_cast<size_t>(p.ne * entity_width(m, dim)));
  p.rel.resize(static_cast<size_t>(p.nr * relation_width(m, dim)));
  for (double& v : p.ent) v = u(gen);
  for (double& v : p.rel) v = u(gen);
  return p;
}

// sum_i w_i score_i (+ sum_ij w'_ij negative score_ij), the scalar whose gradient is checked.
double objective(const Problem& p, const std::vector<double>& wp, const std::vector<double>& wn,
                 Corrupt c) {
  std::vector<double> pos(4), neg(12);
  score_triples(p.spec, p.tables(), p.triples(), pos.data());
  score_negatives(p.spec, p.tables(), p.triples(), p.negatives(c), neg.data());
  double s = 0;
  for (size_t i = 0; i < pos.size(); ++i) s += wp[i] * pos[i];
  for (size_t i = 0; i < neg.size(); ++i) s += wn[i] * neg[i];
  return s;
}

void check_gradients(Model m) {
  SCOPED_TRACE(model_name(m));
  for (Corrupt c : {Corrupt::Head, Corrupt::Tail}) {
    Problem p = make(m, 4);
    std::vector<double> wp = {0.5, -1.0, 2.0, 0.25}, wn(12);
    for (size_t i = 0; i < wn.size(); ++i) wn[i] = 0.1 * static_cast<double>(i) - 0.5;
    std::vector<double> de(p.ent.size(), 0.0), dr(p.rel.size(), 0.0);
    Grads<double> g{de.data(), dr.data()};
    backward_triples(p.spec, p.tables(), p.triples(), wp.data(), g);
    backward_negatives(p.spec, p.tables(), p.triples(), p.negatives(c), wn.data(), g);
    const double eps = 1e-6;
    for (auto [values, grad] : {std::pair{&p.ent, &de}, std::pair{&p.rel, &dr}}) {
      for (size_t i = 0; i < values->size(); ++i) {
        const double keep = (*values)[i];
        (*values)[i] = keep + eps;
        const double up = objective(p, wp, wn, c);
        (*values)[i] = keep - eps;
        const double down = objective(p, wp, wn, c);
        (*values)[i] = keep;
        EXPECT_NEAR((*grad)[i], (up - down) / (2 * eps), 1e-6 * (1 + std::abs((*grad)[i])))
            << (values == &p.ent ? "entity" : "relation") << " element " << i;
      }
    }
  }
}

TEST(KgeScores, EveryModelsGradientMatchesFiniteDifferences) {
  for (size_t m = 0; m < model_names().size(); ++m) check_gradients(static_cast<Model>(m));
}

TEST(KgeScores, HandWorkedValues) {
  // One entity pair and relation, d = 2: h = (1, 2), r = (3, -1), t = (0.5, 4).
  std::vector<double> ent = {1, 2, 0.5, 4}, rel = {3, -1};
  std::vector<int64_t> h = {0}, r = {0}, t = {1};
  auto score = [&](Model m, double gamma, int64_t dim = 2) {
    double out = 0;
    score_triples<double>({m, dim, gamma}, {ent.data(), 2, rel.data(), 1},
                          {h.data(), r.data(), t.data(), 1}, &out);
    return out;
  };
  EXPECT_DOUBLE_EQ(score(Model::DistMult, 0), 1 * 3 * 0.5 + 2 * -1 * 4);         // -6.5
  EXPECT_DOUBLE_EQ(score(Model::TransE_L1, 10), 10 - (3.5 + 3));                  // h + r - t = (3.5, -3)
  EXPECT_DOUBLE_EQ(score(Model::TransE_L2, 10), 10 - std::sqrt(3.5 * 3.5 + 9.0));
  // d = 1 for the complex models: h = 1 + 2i, t = 0.5 + 4i, ComplEx's r = 3 - i, RotatE's phase 3.
  // ComplEx: Re(h r conj(t)) = Re((5 + 5i)(0.5 - 4i)) = 22.5.
  EXPECT_DOUBLE_EQ(score(Model::ComplEx, 0, 1), 22.5);
  const double re = std::cos(3.0) - 2 * std::sin(3.0) - 0.5, im = std::sin(3.0) + 2 * std::cos(3.0) - 4;
  EXPECT_NEAR(score(Model::RotatE, 5, 1), 5 - std::sqrt(re * re + im * im), 1e-12);
}

TEST(KgeScores, BadIdsAndChunksAreRejected) {
  Problem p = make(Model::DistMult, 3);
  std::vector<double> out(12);
  p.h[2] = 7;
  EXPECT_THROW(score_triples(p.spec, p.tables(), p.triples(), out.data()), IndexError);
  p.h[2] = 2;
  p.r[0] = -1;
  EXPECT_THROW(score_triples(p.spec, p.tables(), p.triples(), out.data()), IndexError);
  p.r[0] = 0;
  NegativeSpec bad = p.negatives(Corrupt::Tail);
  bad.chunk_size = 3;  // 4 triples
  EXPECT_THROW(score_negatives(p.spec, p.tables(), p.triples(), bad, out.data()), ValueError);
  p.negs[5] = 99;
  EXPECT_THROW(score_negatives(p.spec, p.tables(), p.triples(), p.negatives(Corrupt::Tail), out.data()),
               IndexError);
  EXPECT_THROW(parse_model("TransQ"), ValueError);
  EXPECT_EQ(parse_model("transe"), Model::TransE_L2);
  EXPECT_EQ(parse_model("ROTATE"), Model::RotatE);
}

}  // namespace
}  // namespace nodeweave::kge
