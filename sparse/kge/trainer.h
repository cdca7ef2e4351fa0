// The KGE training loop: each step takes a batch of training triples (every epoch visits them in a
// new order, KeyedPermutation), corrupts their heads (odd steps) or tails (even steps) with the
// shared negatives of each chunk (uniform entities, plus as many drawn in proportion to degree with
// `neg_deg_sample`, as DGL-KE does), scores, takes the loss and its gradient (loss.h), adds the
// regularizer, and updates only the touched rows (row_optimizers.h).
//
// Threads: steps run on `threads` OpenMP threads at once, each updating the one shared table
// without locks (Hogwild, Niu et al. 2011, as DGL-KE and PyTorch's Hogwild examples do: a row
// written by two threads at once keeps one of the updates). Every draw of step s is a function of
// (seed, s) alone, so with one thread a run is bit-reproducible, and a run resumed from a
// checkpoint after step s continues exactly as the uninterrupted run would.
#pragma once
#include <cstdint>
#include <vector>

#include "sparse/kge/loss.h"
#include "sparse/kge/row_optimizers.h"
#include "sparse/kge/triple_scores.h"

namespace nodeweave::kge {

struct TrainConfig {
  ScoreSpec score;
  LossSpec loss;
  OptimizerSpec optimizer;
  int64_t batch_size = 1024;
  int64_t neg_sample_size = 256;
  int64_t neg_chunk_size = 0;  // triples sharing one set of negatives; 0: neg_sample_size (DGL-KE)
  bool neg_deg_sample = false;
  double reg_coef = 0.0;
  int64_t reg_norm = 3;
  uint64_t seed = 0;
  int threads = 1;  // 0: the runtime's thread count
};

// Everything a checkpoint holds besides the configuration.
struct TrainState {
  std::vector<float> entity, relation;          // the tables, row-major
  std::vector<float> entity_opt, relation_opt;  // optimizer state, optimizer_state_width per row
  int64_t step = 0;                             // steps done
};

// One step's draws: the positive triples and, per chunk, the negative entities (chunks x k, k
// doubled with neg_deg_sample), and which side they replace.
struct Batch {
  std::vector<int64_t> head, rel, tail, negatives;
  bool corrupt_head = false;
};

class Trainer {
 public:
  // Validates everything (ValueError / IndexError naming the setting) and takes the triples and the
  // state; the state's tables must have the model's widths, the optimizer state may be empty (zeros).
  Trainer(TrainConfig config, std::vector<int64_t> head, std::vector<int64_t> rel,
          std::vector<int64_t> tail, int64_t num_entities, int64_t num_relations, TrainState state);

  // Runs `steps` more steps; returns the loss of each, in step order.
  std::vector<double> run(int64_t steps);

  // The draws of step s (what run() uses at that step), for tests and inspection.
  Batch batch(int64_t s) const;

  const TrainConfig& config() const { return config_; }
  TrainState& state() { return state_; }
  int64_t steps_per_epoch() const;
  int64_t chunk_size() const { return chunk_; }
  int64_t entity_width() const { return ew_; }
  int64_t relation_width() const { return rw_; }

 private:
  struct Scratch;
  void make_batch(int64_t s, Scratch& scratch) const;
  double step(int64_t s, Scratch& scratch);

  TrainConfig config_;
  std::vector<int64_t> head_, rel_, tail_;
  int64_t num_entities_, num_relations_;
  TrainState state_;
  int64_t ew_, rw_, chunk_;
};

}  // namespace nodeweave::kge
