// The KGE training step (see trainer.h). A step gathers the rows its batch touches into compact
// gradient buffers (entities and relations by sorted unique id), so the optimizer visits each
// touched row once, whatever the number of times the batch used it.
#include "sparse/kge/trainer.h"

#include <algorithm>
#include <cmath>

#include "core_framework/runtime/error.h"
#include "core_framework/runtime/generator.h"
#include "core_framework/runtime/parallel.h"
#include "sparse/kge/chunk_scores.h"
#include "sparse/kge/keyed_permutation.h"

namespace nodeweave::kge {

namespace {

// Draws of one key: splitmix64's own stream.
struct Stream {
  uint64_t key, i = 0;
  uint64_t next() { return splitmix64(key + (++i) * 0x9e3779b97f4a7c15ull); }
  uint64_t below(uint64_t n) {
    return static_cast<uint64_t>((static_cast<unsigned __int128>(next()) * n) >> 64);
  }
};

// Keys of the streams a step uses, so that no two share draws.
enum : uint64_t { kOrderStream = 1, kNegativeStream = 2 };

uint64_t key_of(uint64_t seed, uint64_t stream, uint64_t index) {
  return splitmix64(seed ^ splitmix64(stream * 0x632be59bd9b4e019ull + splitmix64(index)));
}

// Sorted unique ids and each id's position among them.
struct LocalIds {
  std::vector<int64_t> ids;
  void build(std::vector<int64_t>& all) {
    std::sort(all.begin(), all.end());
    all.erase(std::unique(all.begin(), all.end()), all.end());
    ids.swap(all);
  }
  int64_t operator()(int64_t id) const {
    return std::lower_bound(ids.begin(), ids.end(), id) - ids.begin();
  }
};

}  // namespace

struct Trainer::Scratch {
  std::vector<int64_t> h, r, t, negatives, all;
  LocalIds ents, rels;
  std::vector<int64_t> local_h, local_r, local_t, local_neg;
  std::vector<float> grad_e, grad_r, neg_scores, neg_grads;
  // One chunk's rows (table and gradient) as chunk_scores.h takes them.
  std::vector<const float*> ph, pr, pt, pn;
  std::vector<float*> gh, gr, gt, gn;
  ChunkWork<float> work;
};

Trainer::Trainer(TrainConfig config, std::vector<int64_t> head, std::vector<int64_t> rel,
                 std::vector<int64_t> tail, int64_t num_entities, int64_t num_relations,
                 TrainState state)
    : config_(config), head_(std::move(head)), rel_(std::move(rel)), tail_(std::move(tail)),
      num_entities_(num_entities), num_relations_(num_relations), state_(std::move(state)) {
  const TrainConfig& c = config_;
  NW_CHECK(c.score.dim > 0, ValueError, "hidden_dim must be positive, got ", c.score.dim);
  NW_CHECK(num_entities > 0 && num_relations > 0, ValueError,
           "the graph needs at least one entity and one relation, got ", num_entities, " and ",
           num_relations);
  NW_CHECK(!head_.empty(), ValueError, "there are no training triples");
  NW_CHECK(head_.size() == rel_.size() && head_.size() == tail_.size(), ValueError,
           "head, relation and tail must have one id per triple");
  NW_CHECK(c.batch_size > 0, ValueError, "batch_size must be positive, got ", c.batch_size);
  NW_CHECK(c.neg_sample_size >= 0, ValueError, "neg_sample_size must be >= 0, got ", c.neg_sample_size);
  chunk_ = c.neg_chunk_size > 0 ? c.neg_chunk_size : std::max<int64_t>(c.neg_sample_size, 1);
  chunk_ = std::min(chunk_, c.batch_size);
  NW_CHECK(c.batch_size % chunk_ == 0, ValueError, "batch_size ", c.batch_size,
           " must be a multiple of neg_chunk_size ", chunk_,
           " (the triples of a batch share negatives chunk by chunk)");
  NW_CHECK(c.optimizer.lr > 0, ValueError, "lr must be positive, got ", c.optimizer.lr);
  NW_CHECK(c.reg_coef >= 0, ValueError, "regularization_coef must be >= 0, got ", c.reg_coef);
  NW_CHECK(c.reg_norm >= 1, ValueError, "regularization_norm must be >= 1, got ", c.reg_norm);
  NW_CHECK(c.loss.adversarial_temperature >= 0, ValueError,
           "adversarial_temperature must be >= 0, got ", c.loss.adversarial_temperature);
  NW_CHECK(c.threads >= 0, ValueError, "threads must be >= 0, got ", c.threads);
  ew_ = kge::entity_width(c.score.model, c.score.dim);
  rw_ = kge::relation_width(c.score.model, c.score.dim);
  const Tables<float> tab{state_.entity.data(), num_entities, state_.relation.data(), num_relations};
  NW_CHECK(static_cast<int64_t>(state_.entity.size()) == num_entities * ew_, ValueError,
           "the entity table must have ", num_entities, " x ", ew_, " floats, got ", state_.entity.size());
  NW_CHECK(static_cast<int64_t>(state_.relation.size()) == num_relations * rw_, ValueError,
           "the relation table must have ", num_relations, " x ", rw_, " floats, got ",
           state_.relation.size());
  check_triples(c.score, tab, {head_.data(), rel_.data(), tail_.data(), static_cast<int64_t>(head_.size())});
  const int64_t esw = optimizer_state_width(c.optimizer.kind, ew_);
  const int64_t rsw = optimizer_state_width(c.optimizer.kind, rw_);
  if (state_.entity_opt.empty()) state_.entity_opt.assign(static_cast<size_t>(num_entities * esw), 0.f);
  if (state_.relation_opt.empty()) state_.relation_opt.assign(static_cast<size_t>(num_relations * rsw), 0.f);
  NW_CHECK(static_cast<int64_t>(state_.entity_opt.size()) == num_entities * esw &&
               static_cast<int64_t>(state_.relation_opt.size()) == num_relations * rsw,
           ValueError, "the optimizer state does not match the optimizer and tables (another optimizer's?)");
  NW_CHECK(state_.step >= 0, ValueError, "step must be >= 0, got ", state_.step);
}

int64_t Trainer::steps_per_epoch() const {
  const auto n = static_cast<int64_t>(head_.size());
  return (n + config_.batch_size - 1) / config_.batch_size;
}

Batch Trainer::batch(int64_t s) const {
  Scratch w;
  make_batch(s, w);
  return {w.h, w.r, w.t, w.negatives, s % 2 == 1};
}

void Trainer::make_batch(int64_t s, Scratch& w) const {
  const TrainConfig& c = config_;
  const int64_t B = c.batch_size, n = static_cast<int64_t>(head_.size());
  const int64_t spe = steps_per_epoch();
  // The batch: positions [j B, j B + B) of this epoch's order, wrapping within the epoch.
  const KeyedPermutation order(static_cast<uint64_t>(n), key_of(c.seed, kOrderStream, static_cast<uint64_t>(s / spe)));
  w.h.resize(static_cast<size_t>(B));
  w.r.resize(static_cast<size_t>(B));
  w.t.resize(static_cast<size_t>(B));
  for (int64_t b = 0; b < B; ++b) {
    const auto idx = static_cast<size_t>(order(static_cast<uint64_t>(((s % spe) * B + b) % n)));
    w.h[static_cast<size_t>(b)] = head_[idx];
    w.r[static_cast<size_t>(b)] = rel_[idx];
    w.t[static_cast<size_t>(b)] = tail_[idx];
  }
  // Negatives: per chunk, k uniform entities, then (neg_deg_sample) k endpoints of random training
  // triples, which are entities drawn in proportion to their degree.
  const int64_t k = c.neg_sample_size, kt = c.neg_deg_sample ? 2 * k : k, chunks = B / chunk_;
  Stream rng{key_of(c.seed, kNegativeStream, static_cast<uint64_t>(s))};
  w.negatives.resize(static_cast<size_t>(chunks * kt));
  for (int64_t ch = 0; ch < chunks; ++ch) {
    int64_t* out = w.negatives.data() + ch * kt;
    for (int64_t j = 0; j < k; ++j) out[j] = static_cast<int64_t>(rng.below(static_cast<uint64_t>(num_entities_)));
    for (int64_t j = k; j < kt; ++j) {
      const auto idx = static_cast<size_t>(rng.below(static_cast<uint64_t>(n)));
      out[j] = (rng.next() >> 63) ? head_[idx] : tail_[idx];
    }
  }
}

double Trainer::step(int64_t s, Scratch& w) {
  const TrainConfig& c = config_;
  const int64_t B = c.batch_size;
  make_batch(s, w);
  const bool corrupt_head = s % 2 == 1;
  const int64_t kt = c.neg_sample_size * (c.neg_deg_sample ? 2 : 1);
  // Compact ids of the touched rows.
  w.all.assign(w.h.begin(), w.h.end());
  w.all.insert(w.all.end(), w.t.begin(), w.t.end());
  w.all.insert(w.all.end(), w.negatives.begin(), w.negatives.end());
  w.ents.build(w.all);
  w.all.assign(w.r.begin(), w.r.end());
  w.rels.build(w.all);
  auto localize = [](const LocalIds& ids, const std::vector<int64_t>& in, std::vector<int64_t>& out) {
    out.resize(in.size());
    for (size_t i = 0; i < in.size(); ++i) out[i] = ids(in[i]);
  };
  localize(w.ents, w.h, w.local_h);
  localize(w.ents, w.t, w.local_t);
  localize(w.rels, w.r, w.local_r);
  localize(w.ents, w.negatives, w.local_neg);
  const auto ne = static_cast<int64_t>(w.ents.ids.size()), nr = static_cast<int64_t>(w.rels.ids.size());
  w.grad_e.assign(static_cast<size_t>(ne * ew_), 0.f);
  w.grad_r.assign(static_cast<size_t>(nr * rw_), 0.f);
  w.neg_scores.resize(static_cast<size_t>(chunk_ * kt));
  w.neg_grads.resize(static_cast<size_t>(chunk_ * kt));
  for (auto* v : {&w.ph, &w.pr, &w.pt}) v->resize(static_cast<size_t>(chunk_));
  for (auto* v : {&w.gh, &w.gr, &w.gt}) v->resize(static_cast<size_t>(chunk_));
  w.pn.resize(static_cast<size_t>(kt));
  w.gn.resize(static_cast<size_t>(kt));

  const float* E = state_.entity.data();
  const float* R = state_.relation.data();
  const int64_t d = c.score.dim;
  const auto gamma = static_cast<float>(c.score.gamma);
  const float inv_b = 1.0f / static_cast<float>(B);
  double loss = 0;
  visit_model(c.score.model, [&](auto model) {
    using M = decltype(model);
    const int64_t cs = chunk_;
    for (int64_t ch = 0; ch < B / cs; ++ch) {
      for (int64_t i = 0; i < cs; ++i) {
        const auto b = static_cast<size_t>(ch * cs + i), u = static_cast<size_t>(i);
        w.ph[u] = E + w.h[b] * ew_;
        w.pr[u] = R + w.r[b] * rw_;
        w.pt[u] = E + w.t[b] * ew_;
        w.gh[u] = w.grad_e.data() + w.local_h[b] * ew_;
        w.gr[u] = w.grad_r.data() + w.local_r[b] * rw_;
        w.gt[u] = w.grad_e.data() + w.local_t[b] * ew_;
      }
      for (int64_t j = 0; j < kt; ++j) {
        const auto at = static_cast<size_t>(ch * kt + j), u = static_cast<size_t>(j);
        w.pn[u] = E + w.negatives[at] * ew_;
        w.gn[u] = w.grad_e.data() + w.local_neg[at] * ew_;
      }
      chunk_forward<M>(w.ph.data(), w.pr.data(), w.pt.data(), cs, w.pn.data(), kt, corrupt_head, d, gamma,
                       w.work, w.neg_scores.data());
      for (int64_t i = 0; i < cs; ++i) {
        const auto u = static_cast<size_t>(i);
        const float pos = M::score(w.ph[u], w.pr[u], w.pt[u], d, gamma);
        float dpos;
        float* g = w.neg_grads.data() + i * kt;
        loss += triple_loss(c.loss, pos, w.neg_scores.data() + i * kt, kt, &dpos, g);
        for (int64_t j = 0; j < kt; ++j) g[j] *= inv_b;
        M::backward(w.ph[u], w.pr[u], w.pt[u], d, gamma, dpos * inv_b, w.gh[u], w.gr[u], w.gt[u]);
      }
      chunk_backward<M>(w.ph.data(), w.pr.data(), w.pt.data(), cs, w.pn.data(), kt, corrupt_head, d, gamma,
                        w.work, w.neg_scores.data(), w.neg_grads.data(), w.gh.data(), w.gr.data(),
                        w.gt.data(), w.gn.data());
    }
  });
  loss /= static_cast<double>(B);
  // Regularizer: coef * sum |x|^p over the rows this step touched.
  if (c.reg_coef > 0) {
    const auto p = static_cast<float>(c.reg_norm), coef = static_cast<float>(c.reg_coef);
    auto regularize = [&](const float* table, const LocalIds& ids, int64_t width, float* grad) {
      for (size_t u = 0; u < ids.ids.size(); ++u) {
        const float* row = table + ids.ids[u] * width;
        float* g = grad + static_cast<int64_t>(u) * width;
        for (int64_t i = 0; i < width; ++i) {
          const float a = std::abs(row[i]);
          loss += static_cast<double>(coef * std::pow(a, p));
          g[i] += coef * p * std::pow(a, p - 1) * (row[i] > 0 ? 1.f : row[i] < 0 ? -1.f : 0.f);
        }
      }
    };
    regularize(E, w.ents, ew_, w.grad_e.data());
    regularize(R, w.rels, rw_, w.grad_r.data());
  }
  // Updates, each touched row once.
  const int64_t esw = optimizer_state_width(c.optimizer.kind, ew_);
  const int64_t rsw = optimizer_state_width(c.optimizer.kind, rw_);
  for (size_t u = 0; u < w.ents.ids.size(); ++u)
    update_row(c.optimizer, state_.entity.data() + w.ents.ids[u] * ew_,
               state_.entity_opt.data() + w.ents.ids[u] * esw,
               w.grad_e.data() + static_cast<int64_t>(u) * ew_, ew_, s + 1);
  for (size_t u = 0; u < w.rels.ids.size(); ++u)
    update_row(c.optimizer, state_.relation.data() + w.rels.ids[u] * rw_,
               state_.relation_opt.data() + w.rels.ids[u] * rsw,
               w.grad_r.data() + static_cast<int64_t>(u) * rw_, rw_, s + 1);
  return loss;
}

std::vector<double> Trainer::run(int64_t steps) {
  NW_CHECK(steps >= 0, ValueError, "steps must be >= 0, got ", steps);
  std::vector<double> losses(static_cast<size_t>(steps));
  const int64_t first = state_.step;
  const int threads = config_.threads > 0 ? config_.threads : get_num_threads();
  if (threads <= 1) {
    // A step's GEMMs are small (a chunk by its negatives): OpenBLAS's OpenMP build would start a
    // team for each, costing more than the product (measured: DistMult at d = 200 spent a sixth of
    // its time in libgomp). Inside the parallel branch below OpenBLAS sees omp_in_parallel() and
    // stays serial by itself; here the calling thread's OpenMP setting says one thread for the run.
    const int before = omp_get_max_threads();
    omp_set_num_threads(1);
    Scratch w;
    for (int64_t i = 0; i < steps; ++i) losses[static_cast<size_t>(i)] = step(first + i, w);
    omp_set_num_threads(before);
  } else {
#pragma omp parallel num_threads(threads)
    {
      Scratch w;
#pragma omp for schedule(dynamic, 1)
      for (int64_t i = 0; i < steps; ++i) losses[static_cast<size_t>(i)] = step(first + i, w);
    }
  }
  state_.step = first + steps;
  return losses;
}

}  // namespace nodeweave::kge
