// nodeweave._C.kge: the knowledge-graph-embedding kernels (sparse/kge/) on NumPy arrays. Tables are
// float32 or float64 C-contiguous 2-D arrays, ids integer 1-D arrays; outputs are new NumPy arrays
// of the tables' dtype. The GIL is released while the kernels run.
#include <optional>

#include "graph_arrays.h"
#include "py_convert.h"
#include "sparse/kge/filtered_ranking.h"
#include "sparse/kge/trainer.h"
#include "sparse/kge/triple_scores.h"

namespace nodeweave::py {

namespace {

using IdArray = pyb::array_t<int64_t, pyb::array::c_style | pyb::array::forcecast>;

// An integer 1-D array as int64 (a float or bool array is a TypeError naming `name`).
IdArray ids_arg(pyb::handle obj, const char* name) {
  const pyb::array a = pyb::array::ensure(obj);
  NW_CHECK(a && (a.dtype().kind() == 'i' || a.dtype().kind() == 'u'), TypeError, name,
           " must be an array of integer ids, got ", a ? std::string(pyb::str(a.dtype())) : type_name(obj));
  NW_CHECK(a.ndim() == 1, ValueError, name, " must be 1-D, got ", a.ndim(), " dimensions");
  return IdArray::ensure(a);
}

struct TripleArrays {
  IdArray h, r, t;
  kge::Triples view() const { return {h.data(), r.data(), t.data(), static_cast<int64_t>(h.size())}; }
};

TripleArrays triples_arg(pyb::handle h, pyb::handle r, pyb::handle t, const char* what) {
  TripleArrays out{ids_arg(h, "head"), ids_arg(r, "relation"), ids_arg(t, "tail")};
  NW_CHECK(out.h.size() == out.r.size() && out.h.size() == out.t.size(), ValueError, what,
           ": head, relation and tail must have one id per triple, got lengths ", out.h.size(), ", ",
           out.r.size(), ", ", out.t.size());
  return out;
}

kge::ScoreSpec spec_arg(const std::string& model, int64_t dim, double gamma) {
  NW_CHECK(dim > 0, ValueError, "dim must be positive, got ", dim);
  return {kge::parse_model(model), dim, gamma};
}

// A C-contiguous float table of `width` columns and its row count.
template <typename T>
pyb::array_t<T, pyb::array::c_style> table_arg(const pyb::array& a, const char* name, int64_t width) {
  NW_CHECK(a.ndim() == 2 && a.shape(1) == width, ValueError, name, " must have shape (rows, ", width,
           ") for this model and dim, got ", a.ndim() == 2 ? shape_str({a.shape(0), a.shape(1)}) : "ndim " + std::to_string(a.ndim()));
  NW_CHECK(a.flags() & pyb::array::c_style, ValueError, name, " must be C-contiguous");
  return pyb::array_t<T, pyb::array::c_style>::ensure(a);
}

// Calls f(T{}) for the tables' float type; both tables must share it.
template <typename F>
pyb::object on_float_type(const pyb::array& entity, const pyb::array& relation, F&& f) {
  const bool f32 = entity.dtype().is(pyb::dtype::of<float>());
  const bool f64 = entity.dtype().is(pyb::dtype::of<double>());
  NW_CHECK(f32 || f64, TypeError, "entity must be float32 or float64, got ", std::string(pyb::str(entity.dtype())));
  NW_CHECK(relation.dtype().is(entity.dtype()), TypeError, "relation must have the entity table's dtype ",
           std::string(pyb::str(entity.dtype())), ", got ", std::string(pyb::str(relation.dtype())));
  if (f32) return f(float{});
  return f(double{});
}

template <typename T>
struct TableArrays {
  pyb::array_t<T, pyb::array::c_style> e, r;
  kge::Tables<T> view() const {
    return {e.data(), static_cast<int64_t>(e.shape(0)), r.data(), static_cast<int64_t>(r.shape(0))};
  }
};

template <typename T>
TableArrays<T> tables_arg(const kge::ScoreSpec& s, const pyb::array& entity, const pyb::array& relation) {
  return {table_arg<T>(entity, "entity", kge::entity_width(s.model, s.dim)),
          table_arg<T>(relation, "relation", kge::relation_width(s.model, s.dim))};
}

kge::Corrupt corrupt_arg(const std::string& side) {
  NW_CHECK(side == "head" || side == "tail", ValueError, "corrupt must be 'head' or 'tail', got '", side, "'");
  return side == "head" ? kge::Corrupt::Head : kge::Corrupt::Tail;
}

struct NegativeArrays {
  IdArray ids;
  kge::NegativeSpec spec;
};

NegativeArrays negatives_arg(pyb::handle negatives, int64_t chunk_size, const std::string& corrupt) {
  const pyb::array a = pyb::array::ensure(negatives);
  NW_CHECK(a && a.ndim() == 2, ValueError, "negatives must be a 2-D array (chunks, k) of entity ids");
  NegativeArrays out{ids_arg(a.attr("reshape")(-1), "negatives"), {}};
  out.spec = {chunk_size, out.ids.data(), static_cast<int64_t>(a.shape(1)), corrupt_arg(corrupt)};
  return out;
}

std::vector<int64_t> id_vector(pyb::handle obj, const char* name) {
  const IdArray a = ids_arg(obj, name);
  return {a.data(), a.data() + a.size()};
}

// A float32 array's values (any shape) copied into a vector; empty for None.
std::vector<float> float_vector(pyb::handle obj, const char* name) {
  if (obj.is_none()) return {};
  const pyb::array a = pyb::array::ensure(obj);
  NW_CHECK(a && a.dtype().is(pyb::dtype::of<float>()), TypeError, name, " must be a float32 array");
  const auto f = pyb::array_t<float, pyb::array::c_style>::ensure(a);
  return {f.data(), f.data() + f.size()};
}

// A (rows, width) NumPy view of a trainer's vector; `owner` (the Python trainer) keeps it alive.
pyb::array table_view(std::vector<float>& v, int64_t width, pyb::handle owner) {
  const auto w = static_cast<pyb::ssize_t>(width);
  return pyb::array_t<float>({static_cast<pyb::ssize_t>(v.size()) / w, w}, v.data(), owner);
}

}  // namespace

void bind_kge(pyb::module_& root) {
  pyb::module_ m = root.def_submodule("kge", "knowledge-graph-embedding kernels (sparse/kge)");
  m.def("model_names", &kge::model_names, "The models' names, in the kernels' order.");
  m.def(
      "widths",
      [](const std::string& model, int64_t dim) {
        const kge::ScoreSpec s = spec_arg(model, dim, 0);
        return pyb::make_tuple(kge::entity_width(s.model, dim), kge::relation_width(s.model, dim));
      },
      pyb::arg("model"), pyb::arg("dim"), "(entity row width, relation row width) for hidden size dim.");

  m.def(
      "score",
      [](const std::string& model, int64_t dim, double gamma, const pyb::array& entity,
         const pyb::array& relation, pyb::handle h, pyb::handle r, pyb::handle t) {
        const kge::ScoreSpec s = spec_arg(model, dim, gamma);
        const TripleArrays tri = triples_arg(h, r, t, "score");
        return on_float_type(entity, relation, [&](auto tag) -> pyb::object {
          using T = decltype(tag);
          const TableArrays<T> tab = tables_arg<T>(s, entity, relation);
          pyb::array_t<T> out(tri.h.size());
          {
            pyb::gil_scoped_release nogil;
            kge::score_triples(s, tab.view(), tri.view(), out.mutable_data());
          }
          return std::move(out);
        });
      },
      pyb::arg("model"), pyb::arg("dim"), pyb::arg("gamma"), pyb::arg("entity"), pyb::arg("relation"),
      pyb::arg("head"), pyb::arg("rel"), pyb::arg("tail"), "Scores of the triples (n,).");

  m.def(
      "score_negatives",
      [](const std::string& model, int64_t dim, double gamma, const pyb::array& entity,
         const pyb::array& relation, pyb::handle h, pyb::handle r, pyb::handle t, pyb::handle negatives,
         int64_t chunk_size, const std::string& corrupt) {
        const kge::ScoreSpec s = spec_arg(model, dim, gamma);
        const TripleArrays tri = triples_arg(h, r, t, "score_negatives");
        const NegativeArrays neg = negatives_arg(negatives, chunk_size, corrupt);
        return on_float_type(entity, relation, [&](auto tag) -> pyb::object {
          using T = decltype(tag);
          const TableArrays<T> tab = tables_arg<T>(s, entity, relation);
          pyb::array_t<T> out({static_cast<pyb::ssize_t>(tri.h.size()), static_cast<pyb::ssize_t>(neg.spec.k)});
          {
            pyb::gil_scoped_release nogil;
            kge::score_negatives(s, tab.view(), tri.view(), neg.spec, out.mutable_data());
          }
          return std::move(out);
        });
      },
      pyb::arg("model"), pyb::arg("dim"), pyb::arg("gamma"), pyb::arg("entity"), pyb::arg("relation"),
      pyb::arg("head"), pyb::arg("rel"), pyb::arg("tail"), pyb::arg("negatives"), pyb::arg("chunk_size"),
      pyb::arg("corrupt"),
      "(n, k) scores: triple i with its head or tail replaced by each negative of its chunk "
      "(negatives: (n / chunk_size, k) entity ids).");

  m.def(
      "backward",
      [](const std::string& model, int64_t dim, double gamma, const pyb::array& entity,
         const pyb::array& relation, pyb::handle h, pyb::handle r, pyb::handle t, const pyb::array& grad,
         pyb::object negatives, int64_t chunk_size, const std::string& corrupt, pyb::object grad_negatives) {
        const kge::ScoreSpec s = spec_arg(model, dim, gamma);
        const TripleArrays tri = triples_arg(h, r, t, "backward");
        std::optional<NegativeArrays> neg;
        if (!negatives.is_none()) neg = negatives_arg(negatives, chunk_size, corrupt);
        return on_float_type(entity, relation, [&](auto tag) -> pyb::object {
          using T = decltype(tag);
          const TableArrays<T> tab = tables_arg<T>(s, entity, relation);
          auto g = pyb::array_t<T, pyb::array::c_style | pyb::array::forcecast>::ensure(grad);
          NW_CHECK(g && g.ndim() == 1 && g.size() == tri.h.size(), ValueError,
                   "grad must have one value per triple (", tri.h.size(), ")");
          pyb::array_t<T, pyb::array::c_style | pyb::array::forcecast> gn;
          if (neg) {
            gn = pyb::array_t<T, pyb::array::c_style | pyb::array::forcecast>::ensure(grad_negatives);
            NW_CHECK(gn && gn.size() == tri.h.size() * static_cast<pyb::ssize_t>(neg->spec.k), ValueError,
                     "grad_negatives must have shape (", tri.h.size(), ", ", neg->spec.k, ")");
          }
          pyb::array_t<T> de({tab.e.shape(0), tab.e.shape(1)}), dr({tab.r.shape(0), tab.r.shape(1)});
          std::fill(de.mutable_data(), de.mutable_data() + de.size(), T(0));
          std::fill(dr.mutable_data(), dr.mutable_data() + dr.size(), T(0));
          {
            pyb::gil_scoped_release nogil;
            const kge::Grads<T> out{de.mutable_data(), dr.mutable_data()};
            kge::backward_triples(s, tab.view(), tri.view(), g.data(), out);
            if (neg) kge::backward_negatives(s, tab.view(), tri.view(), neg->spec, gn.data(), out);
          }
          return pyb::make_tuple(de, dr);
        });
      },
      pyb::arg("model"), pyb::arg("dim"), pyb::arg("gamma"), pyb::arg("entity"), pyb::arg("relation"),
      pyb::arg("head"), pyb::arg("rel"), pyb::arg("tail"), pyb::arg("grad"), pyb::arg("negatives") = pyb::none(),
      pyb::arg("chunk_size") = 1, pyb::arg("corrupt") = "tail", pyb::arg("grad_negatives") = pyb::none(),
      "(d entity, d relation): dense gradients of sum(grad * scores) (+ sum(grad_negatives * "
      "negative scores)).");

  pyb::class_<kge::Trainer>(m, "Trainer", "The C++ training loop (sparse/kge/trainer.h).")
      .def(pyb::init([](const std::string& model, int64_t dim, double gamma, const std::string& loss,
                        double margin, double adversarial_temperature, const std::string& optimizer,
                        double lr, int64_t batch_size, int64_t neg_sample_size, int64_t neg_chunk_size,
                        bool neg_deg_sample, double reg_coef, int64_t reg_norm, uint64_t seed, int threads,
                        pyb::handle head, pyb::handle rel, pyb::handle tail, int64_t num_entities,
                        int64_t num_relations, pyb::handle entity, pyb::handle relation,
                        pyb::handle entity_opt, pyb::handle relation_opt, int64_t step) {
             kge::TrainConfig c;
             c.score = spec_arg(model, dim, gamma);
             c.loss = {kge::parse_loss(loss), margin, adversarial_temperature};
             c.optimizer.kind = kge::parse_optimizer(optimizer);
             c.optimizer.lr = lr;
             c.batch_size = batch_size;
             c.neg_sample_size = neg_sample_size;
             c.neg_chunk_size = neg_chunk_size;
             c.neg_deg_sample = neg_deg_sample;
             c.reg_coef = reg_coef;
             c.reg_norm = reg_norm;
             c.seed = seed;
             c.threads = threads;
             kge::TrainState st;
             st.entity = float_vector(entity, "entity");
             st.relation = float_vector(relation, "relation");
             st.entity_opt = float_vector(entity_opt, "entity_opt");
             st.relation_opt = float_vector(relation_opt, "relation_opt");
             st.step = step;
             return new kge::Trainer(c, id_vector(head, "head"), id_vector(rel, "relation"),
                                     id_vector(tail, "tail"), num_entities, num_relations, std::move(st));
           }),
           pyb::arg("model"), pyb::arg("dim"), pyb::arg("gamma"), pyb::arg("loss"), pyb::arg("margin"),
           pyb::arg("adversarial_temperature"), pyb::arg("optimizer"), pyb::arg("lr"),
           pyb::arg("batch_size"), pyb::arg("neg_sample_size"), pyb::arg("neg_chunk_size"),
           pyb::arg("neg_deg_sample"), pyb::arg("reg_coef"), pyb::arg("reg_norm"), pyb::arg("seed"),
           pyb::arg("threads"), pyb::arg("head"), pyb::arg("rel"), pyb::arg("tail"),
           pyb::arg("num_entities"), pyb::arg("num_relations"), pyb::arg("entity"), pyb::arg("relation"),
           pyb::arg("entity_opt") = pyb::none(), pyb::arg("relation_opt") = pyb::none(),
           pyb::arg("step") = 0)
      .def(
          "run",
          [](kge::Trainer& self, int64_t steps) {
            std::vector<double> losses;
            {
              pyb::gil_scoped_release nogil;
              losses = self.run(steps);
            }
            return pyb::array_t<double>(static_cast<pyb::ssize_t>(losses.size()), losses.data());
          },
          pyb::arg("steps"), "Runs `steps` more steps; returns each step's loss.")
      .def_property_readonly("entity", [](pyb::object self) {
        auto& t = self.cast<kge::Trainer&>();
        return table_view(t.state().entity, t.entity_width(), self);
      })
      .def_property_readonly("relation", [](pyb::object self) {
        auto& t = self.cast<kge::Trainer&>();
        return table_view(t.state().relation, t.relation_width(), self);
      })
      .def_property_readonly("entity_opt", [](pyb::object self) {
        auto& t = self.cast<kge::Trainer&>();
        return table_view(t.state().entity_opt,
                          kge::optimizer_state_width(t.config().optimizer.kind, t.entity_width()), self);
      })
      .def_property_readonly("relation_opt", [](pyb::object self) {
        auto& t = self.cast<kge::Trainer&>();
        return table_view(t.state().relation_opt,
                          kge::optimizer_state_width(t.config().optimizer.kind, t.relation_width()), self);
      })
      .def(
          "batch",
          [](const kge::Trainer& self, int64_t s) {
            NW_CHECK(s >= 0, ValueError, "step must be >= 0, got ", s);
            kge::Batch b = self.batch(s);
            const kge::TrainConfig& c = self.config();
            const auto kt = static_cast<pyb::ssize_t>(c.neg_sample_size * (c.neg_deg_sample ? 2 : 1));
            const auto chunks = static_cast<pyb::ssize_t>(c.batch_size / self.chunk_size());
            pyb::array_t<int64_t> negs({chunks, kt});
            std::copy(b.negatives.begin(), b.negatives.end(), negs.mutable_data());
            return pyb::make_tuple(vector_to_numpy(std::move(b.head)), vector_to_numpy(std::move(b.rel)),
                                   vector_to_numpy(std::move(b.tail)), negs,
                                   b.corrupt_head ? "head" : "tail");
          },
          pyb::arg("step"),
          "(head, rel, tail, negatives (chunks, k), corrupted side): the draws of step `step`.")
      .def_property_readonly("step", [](kge::Trainer& t) { return t.state().step; })
      .def_property_readonly("steps_per_epoch", &kge::Trainer::steps_per_epoch)
      .def_property_readonly("chunk_size", &kge::Trainer::chunk_size);

  m.def(
      "filtered_ranks",
      [](const std::string& model, int64_t dim, double gamma, const pyb::array& entity,
         const pyb::array& relation, pyb::handle h, pyb::handle r, pyb::handle t, pyb::object known_h,
         pyb::object known_r, pyb::object known_t) {
        const kge::ScoreSpec s = spec_arg(model, dim, gamma);
        const TripleArrays tri = triples_arg(h, r, t, "filtered_ranks");
        std::optional<TripleArrays> known;
        if (!known_h.is_none()) known = triples_arg(known_h, known_r, known_t, "filtered_ranks (known)");
        return on_float_type(entity, relation, [&](auto tag) -> pyb::object {
          using T = decltype(tag);
          const TableArrays<T> tab = tables_arg<T>(s, entity, relation);
          kge::Ranks ranks;
          {
            pyb::gil_scoped_release nogil;
            std::optional<kge::KnownTriples> index;
            if (known) index.emplace(known->view(), tab.view().num_entities, tab.view().num_relations);
            ranks = kge::filtered_ranks(s, tab.view(), tri.view(), index ? &*index : nullptr);
          }
          return pyb::make_tuple(pyb::array_t<double>(ranks.head.size(), ranks.head.data()),
                                 pyb::array_t<double>(ranks.tail.size(), ranks.tail.data()));
        });
      },
      pyb::arg("model"), pyb::arg("dim"), pyb::arg("gamma"), pyb::arg("entity"), pyb::arg("relation"),
      pyb::arg("head"), pyb::arg("rel"), pyb::arg("tail"), pyb::arg("known_head") = pyb::none(),
      pyb::arg("known_rel") = pyb::none(), pyb::arg("known_tail") = pyb::none(),
      "(head ranks, tail ranks) of the triples among all entities, filtered by the known triples "
      "when given; ties count half.");
}

}  // namespace nodeweave::py
