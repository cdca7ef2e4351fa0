// HaloParts: the cut-edge and in-edge indexes built once, then one part at a time.
#include "distributed/halo_parts.h"

#include <algorithm>
#include <numeric>
#include <utility>

#include "core_framework/runtime/error.h"
#include "core_framework/runtime/parallel.h"

namespace nodeweave::distributed {

namespace {

constexpr int64_t kUnseen = -1, kPending = -2;  // marks in the per-part node map

}  // namespace

HaloParts::HaloParts(TypedGraph g, std::vector<int64_t> part, int64_t num_parts, int64_t num_hops)
    : g_(std::move(g)), part_(std::move(part)), hops_(num_hops) {
  NW_CHECK(num_hops >= 1, ValueError, "HaloParts: num_hops must be >= 1, got ", num_hops);
  relabel_ = relabel_by_part(g_, part_, num_parts);  // checks g_ and part_
  noff_ = g_.node_offsets();
  eoff_ = g_.edge_offsets();
  const size_t k = static_cast<size_t>(num_parts);
  for (const TypedRelation& tr : g_.relations) {
    const graph::CooArrays& coo = tr.rel->coo();
    Ends ends;
    ends.int32 = tr.rel->id_dtype() == DType::Int32;
    ends.src = ends.int32 ? static_cast<const void*>(coo.src.data<int32_t>())
                          : static_cast<const void*>(coo.src.data<int64_t>());
    ends.dst = ends.int32 ? static_cast<const void*>(coo.dst.data<int32_t>())
                          : static_cast<const void*>(coo.dst.data<int64_t>());
    ends.src_type = tr.src_type;
    ends.dst_type = tr.dst_type;
    ends.src_offset = noff_[static_cast<size_t>(tr.src_type)];
    ends.dst_offset = noff_[static_cast<size_t>(tr.dst_type)];
    ends_.push_back(ends);
  }
  // Two passes over the edges (count, then place) build each index without a per-edge sort.
  cut_indptr_.assign(k + 1, 0);
  for (int pass = 0; pass < 2; ++pass) {
    std::vector<int64_t> fill(cut_indptr_.begin(), cut_indptr_.end() - 1);
    for (size_t r = 0; r < ends_.size(); ++r) {
      const Ends& en = ends_[r];
      const int64_t m = g_.relations[r].rel->num_edges();
      for (int64_t e = 0; e < m; ++e) {
        const int64_t ps = part_[static_cast<size_t>(en.u(e))];
        if (ps == part_[static_cast<size_t>(en.v(e))]) continue;
        if (pass == 0)
          ++cut_indptr_[static_cast<size_t>(ps) + 1];
        else
          cut_eids_[static_cast<size_t>(fill[static_cast<size_t>(ps)]++)] = eoff_[r] + e;
      }
    }
    if (pass == 0) {
      for (size_t p = 0; p < k; ++p) cut_indptr_[p + 1] += cut_indptr_[p];
      cut_eids_.resize(static_cast<size_t>(cut_indptr_[k]));
    }
  }
  if (hops_ >= 2) {
    const size_t n = static_cast<size_t>(noff_.back());
    in_indptr_.assign(n + 1, 0);
    for (int pass = 0; pass < 2; ++pass) {
      std::vector<int64_t> fill(in_indptr_.begin(), in_indptr_.end() - 1);
      for (size_t r = 0; r < ends_.size(); ++r) {
        const Ends& en = ends_[r];
        const int64_t m = g_.relations[r].rel->num_edges();
        for (int64_t e = 0; e < m; ++e) {
          const size_t v = static_cast<size_t>(en.v(e));
          if (pass == 0)
            ++in_indptr_[v + 1];
          else
            in_eids_[static_cast<size_t>(fill[v]++)] = eoff_[r] + e;
        }
      }
      if (pass == 0) {
        for (size_t v = 0; v < n; ++v) in_indptr_[v + 1] += in_indptr_[v];
        in_eids_.resize(static_cast<size_t>(in_indptr_[n]));
      }
    }
  }
}

LocalPart HaloParts::extract(int64_t p) const {
  NW_CHECK(p >= 0 && p < relabel_.num_parts, IndexError, "HaloParts.extract: part_id ", p,
           " is out of range for ", relabel_.num_parts, " parts");
  const size_t nt = g_.num_nodes.size(), nr = g_.relations.size();
  const size_t pp = static_cast<size_t>(p);
  LocalPart out;
  out.part_id = p;
  out.num_inner_nodes.resize(nt);
  out.node_ids.resize(nt);
  out.orig_node_ids.resize(nt);
  // Local id of every homogeneous node in this part (kUnseen outside it).
  std::vector<int64_t> local(static_cast<size_t>(noff_.back()), kUnseen);
  for (size_t t = 0; t < nt; ++t) {
    const int64_t b = relabel_.node_offsets[t][pp], e = relabel_.node_offsets[t][pp + 1];
    out.num_inner_nodes[t] = e - b;
    out.node_ids[t].resize(static_cast<size_t>(e - b));
    std::iota(out.node_ids[t].begin(), out.node_ids[t].end(), b);
    out.orig_node_ids[t].assign(relabel_.orig_node[t].begin() + b,
                                relabel_.orig_node[t].begin() + e);
    for (int64_t i = b; i < e; ++i)
      local[static_cast<size_t>(noff_[t] + relabel_.orig_node[t][static_cast<size_t>(i)])] = i - b;
  }
  std::vector<std::vector<int64_t>> halo(nt);        // homogeneous ids, in discovery order
  std::vector<std::vector<int64_t>> halo_edges(nr);  // the input's edge ids
  const auto discover = [&](int64_t u, int64_t type) {
    int64_t& mark = local[static_cast<size_t>(u)];
    if (mark != kUnseen) return false;
    mark = kPending;
    halo[static_cast<size_t>(type)].push_back(u);
    return true;
  };
  // Ring 1: sources of the inner edges.
  std::vector<int64_t> frontier;
  for (size_t r = 0; r < nr; ++r) {
    const Ends& en = ends_[r];
    const std::vector<int64_t>& orig = relabel_.orig_edge[r];
    for (int64_t j = relabel_.edge_offsets[r][pp]; j < relabel_.edge_offsets[r][pp + 1]; ++j) {
      const int64_t u = en.u(orig[static_cast<size_t>(j)]);
      if (discover(u, en.src_type)) frontier.push_back(u);
    }
  }
  // Rings 2 .. num_hops: in-edges of the previous ring, except those leaving an inner node (they
  // are that node's out-edges, taken below, once).
  for (int64_t h = 1; h < hops_; ++h) {
    std::vector<int64_t> next;
    for (int64_t v : frontier) {
      for (int64_t i = in_indptr_[static_cast<size_t>(v)]; i < in_indptr_[static_cast<size_t>(v) + 1];
           ++i) {
        const int64_t hid = in_eids_[static_cast<size_t>(i)];
        const size_t r = static_cast<size_t>(range_of(eoff_, hid));
        const int64_t e = hid - eoff_[r];
        const int64_t u = ends_[r].u(e);
        if (part_[static_cast<size_t>(u)] == p) continue;
        halo_edges[r].push_back(e);
        if (discover(u, ends_[r].src_type)) next.push_back(u);
      }
    }
    frontier.swap(next);
  }
  // Out-edges of the inner nodes into other parts, their destinations not expanded further.
  for (int64_t i = cut_indptr_[pp]; i < cut_indptr_[pp + 1]; ++i) {
    const int64_t hid = cut_eids_[static_cast<size_t>(i)];
    const size_t r = static_cast<size_t>(range_of(eoff_, hid));
    const int64_t e = hid - eoff_[r];
    halo_edges[r].push_back(e);
    discover(ends_[r].v(e), ends_[r].dst_type);
  }
  // HALO nodes ascending by new id, after the inner nodes.
  for (size_t t = 0; t < nt; ++t) {
    const std::vector<int64_t>& fresh = relabel_.new_node[t];
    std::vector<std::pair<int64_t, int64_t>> keyed;  // (new id, input id)
    keyed.reserve(halo[t].size());
    for (int64_t u : halo[t]) {
      const int64_t id = u - noff_[t];
      keyed.emplace_back(fresh[static_cast<size_t>(id)], id);
    }
    std::sort(keyed.begin(), keyed.end());
    int64_t next = out.num_inner_nodes[t];
    for (const auto& [nid, id] : keyed) {
      local[static_cast<size_t>(noff_[t] + id)] = next++;
      out.node_ids[t].push_back(nid);
      out.orig_node_ids[t].push_back(id);
    }
  }
  out.num_inner_edges.resize(nr);
  out.edge_ids.resize(nr);
  out.orig_edge_ids.resize(nr);
  out.src.resize(nr);
  out.dst.resize(nr);
  for (size_t r = 0; r < nr; ++r) {
    const Ends& en = ends_[r];
    const int64_t b = relabel_.edge_offsets[r][pp], e = relabel_.edge_offsets[r][pp + 1];
    const int64_t inner = e - b;
    const std::vector<int64_t>& halo_r = halo_edges[r];
    const size_t m = static_cast<size_t>(inner) + halo_r.size();
    out.num_inner_edges[r] = inner;
    std::vector<int64_t>& ids = out.edge_ids[r];
    std::vector<int64_t>& orig = out.orig_edge_ids[r];
    ids.resize(m);
    orig.resize(m);
    std::iota(ids.begin(), ids.begin() + inner, b);
    // HALO edges by new id; the input ids follow from it.
    for (size_t i = 0; i < halo_r.size(); ++i)
      ids[static_cast<size_t>(inner) + i] = relabel_.new_edge[r][static_cast<size_t>(halo_r[i])];
    std::vector<int64_t>().swap(halo_edges[r]);
    std::sort(ids.begin() + inner, ids.end());
    const std::vector<int64_t>& old_of = relabel_.orig_edge[r];
    parallel_for(0, static_cast<int64_t>(m), kGrainSize, [&](int64_t lo, int64_t hi) {
      for (int64_t i = lo; i < hi; ++i)
        orig[static_cast<size_t>(i)] = old_of[static_cast<size_t>(ids[static_cast<size_t>(i)])];
    });
    std::vector<int64_t>& s = out.src[r];
    std::vector<int64_t>& d = out.dst[r];
    s.resize(m);
    d.resize(m);
    parallel_for(0, static_cast<int64_t>(m), kGrainSize, [&](int64_t lo, int64_t hi) {
      for (int64_t i = lo; i < hi; ++i) {
        const int64_t x = orig[static_cast<size_t>(i)];
        s[static_cast<size_t>(i)] = local[static_cast<size_t>(en.u(x))];
        d[static_cast<size_t>(i)] = local[static_cast<size_t>(en.v(x))];
      }
    });
  }
  return out;
}

}  // namespace nodeweave::distributed
