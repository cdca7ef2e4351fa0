// The training loss of one positive triple and its negatives, and its gradient with respect to the
// scores (DGL-KE's definitions, so its users' hyper-parameters carry over):
//
//   loss = (l_pos(p) + sum_j w_j l_neg(n_j)) / 2
//
// with w_j = 1/k, or with self-adversarial weighting (Sun et al., 2019) w = softmax(alpha * n),
// held constant in the gradient. The batch loss is the mean over its triples.
//
//   logsigmoid, logistic, bce   l_pos(p) = -log sigmoid(p),    l_neg(n) = -log sigmoid(-n)
//   hinge                       l_pos(p) = max(0, margin - p), l_neg(n) = max(0, margin + n)
//
// DGL-KE offers logsigmoid, logistic (softplus of -label * score) and bce (cross-entropy of
// sigmoid(score) with labels 0/1) as three options; for a score they are the same function, so
// here they are three names of one loss, kept so that DGL-KE command lines run unchanged.
#pragma once
#include <cstdint>
#include <string>

namespace nodeweave::kge {

enum class Loss : int32_t { LogSigmoid, Hinge };

// "logsigmoid", "logistic", "bce" or "hinge"; ValueError naming the choices otherwise.
Loss parse_loss(const std::string& name);

struct LossSpec {
  Loss kind = Loss::LogSigmoid;
  double margin = 1.0;                   // hinge only
  double adversarial_temperature = 0.0;  // 0: uniform weights
};

// The loss of one triple (positive score p, negative scores n[0..k)); writes d loss / dp into *dp
// and d loss / dn_j into dn[j] (the weights held constant).
template <typename T>
T triple_loss(const LossSpec& spec, T p, const T* n, int64_t k, T* dp, T* dn);

}  // namespace nodeweave::kge
