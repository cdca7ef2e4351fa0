#include "core_framework/jit/fused_elementwise.h"

#include <cstring>
#include <mutex>

#include "core_framework/engine/functional.h"
#include "core_framework/engine/op_def.h"
#include "core_framework/jit/program_file.h"
#include "core_framework/runtime/error.h"
#include "core_framework/runtime/parallel.h"

namespace nodeweave::jit {

namespace {

std::string attr_text(const AttrValue& a) {
  if (auto* i = std::get_if<int64_t>(&a)) return std::to_string(*i);
  if (auto* d = std::get_if<double>(&a)) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.17g", *d);
    return buf;
  }
  if (auto* b = std::get_if<bool>(&a)) return *b ? "true" : "false";
  if (auto* t = std::get_if<DType>(&a)) return dtype_name(*t);
  if (auto* l = std::get_if<IntList>(&a)) {
    std::string s = "[";
    for (size_t i = 0; i < l->size(); ++i) s += (i ? " " : "") + std::to_string((*l)[i]);
    return s + "]";
  }
  return "?";
}

// A block of `len` elements of t from element `begin` (t contiguous). A one-element operand is
// broadcast to every block: 0-d stays 0-d (the same tensor, so a wrapped Python number keeps its
// weak type promotion: float32 x 0.5 stays float32), and one with dimensions becomes a stride-0
// vector, so each step computes in the dtype its traced result has.
Tensor block_of(const Tensor& t, int64_t begin, int64_t len) {
  if (t.numel() == 1) return t.dim() == 0 ? t : make_view(t, {len}, {0}, t.offset());
  return make_view(t, {len}, {1}, t.offset() + begin);
}

std::vector<TensorMeta> infer(const TensorList& in, const Attrs& a) {
  const FusedBody& body = a.opaque<FusedBody>(0);
  NW_CHECK(static_cast<int>(in.size()) == body.num_inputs, ValueError, "fused_elementwise: takes ",
           body.num_inputs, " inputs, got ", in.size());
  for (size_t i = 0; i < in.size(); ++i)
    NW_CHECK(in[i].numel() == 1 || in[i].shape() == body.shape, ValueError,
             "fused_elementwise: input ", i, " has shape ", shape_str(in[i].shape()), ", expected ",
             shape_str(body.shape), " or one element");
  // Each step's result dtype is what its op's rule gives for its operands' (a body from a file
  // could say otherwise, and the step would then write past its block buffer): checked on
  // one-element stand-ins, which the rules see as they would the blocks.
  TensorList regs;
  for (const Tensor& t : in) regs.push_back(t.dim() == 0 ? t : make_view(t, {1}, {0}, t.offset()));
  for (size_t k = 0; k < body.steps.size(); ++k) {
    const FusedStep& s = body.steps[k];
    TensorList args;
    for (int r : s.args) {
      NW_CHECK(r >= 0 && r < static_cast<int>(regs.size()), ValueError, "fused_elementwise: step ",
               k, " reads register ", r, " before it is written");
      args.push_back(regs[static_cast<size_t>(r)]);
    }
    check_call(*op_def(s.op).signature, args, s.attrs);
    const std::vector<TensorMeta> m = op_def(s.op).infer(args, s.attrs);
    NW_CHECK(m.size() == 1, ValueError, "fused_elementwise: step ", k, " (", op_def(s.op).name,
             ") makes ", m.size(), " results");
    NW_CHECK(m[0].dtype == s.dtype, ValueError, "fused_elementwise: step ", k, " (",
             op_def(s.op).name, ") computes ", dtype_name(m[0].dtype), " but the body says ",
             dtype_name(s.dtype));
    regs.push_back(empty({1}, s.dtype));
  }
  Device dev;
  for (const Tensor& t : in)
    if (t.numel() != 1 || !t.device().is_cpu()) dev = t.device();
  std::vector<TensorMeta> m;
  for (int r : body.outputs)
    m.push_back({body.shape, body.steps[static_cast<size_t>(r - body.num_inputs)].dtype, dev});
  return m;
}

void kernel(const TensorList& in, const Attrs& a, TensorList& out) {
  const FusedBody& body = a.opaque<FusedBody>(0);
  const int64_t n = shape_numel(body.shape);
  if (n == 0) return;
  TensorList inputs(in.size());
  for (size_t i = 0; i < in.size(); ++i) inputs[i] = in[i].numel() == 1 ? in[i] : contiguous(in[i]);
  // Which output (if any) each step's register is: those steps write into the output's block.
  const size_t num_steps = body.steps.size();
  std::vector<int> output_of(num_steps, -1);
  for (size_t o = 0; o < body.outputs.size(); ++o)
    output_of[static_cast<size_t>(body.outputs[o] - body.num_inputs)] = static_cast<int>(o);
  // The other steps write into block buffers shared by liveness (a buffer is free again after
  // the last step reading its value), so the working set of a block stays in L2.
  std::vector<size_t> last_use(num_steps, 0);
  for (size_t k = 0; k < num_steps; ++k)
    for (int r : body.steps[k].args)
      if (r >= body.num_inputs) last_use[static_cast<size_t>(r - body.num_inputs)] = k;
  std::vector<int> slot_of(num_steps, -1);
  std::vector<DType> slot_dtype;
  std::vector<size_t> slot_free_after;  // the step after which the slot's value is dead
  for (size_t k = 0; k < num_steps; ++k) {
    if (output_of[k] >= 0) continue;
    const DType dt = body.steps[k].dtype;
    for (size_t sl = 0; sl < slot_dtype.size() && slot_of[k] < 0; ++sl)
      if (slot_dtype[sl] == dt && slot_free_after[sl] < k) slot_of[k] = static_cast<int>(sl);
    if (slot_of[k] < 0) {
      slot_of[k] = static_cast<int>(slot_dtype.size());
      slot_dtype.push_back(dt);
      slot_free_after.push_back(0);
    }
    // Strictly after: a step never writes the buffer of a value it reads.
    slot_free_after[static_cast<size_t>(slot_of[k])] = std::max(last_use[k], k);
  }
  const int64_t blocks = (n + kBlockElements - 1) / kBlockElements;
  parallel_for(
      0, blocks, std::max<int64_t>(1, kGrainSize / kBlockElements), [&](int64_t b0, int64_t b1) {
        // Per thread, made once: a view per full-size operand, per output and per buffer slot,
        // moved from block to block by rewriting its offset and length (no allocation per block:
        // that and the kernels' set-up are what a block costs besides the arithmetic).
        const int64_t first_len = std::min(kBlockElements, n);
        auto moving_view = [&](const Tensor& t) {
          return t.numel() == 1 ? block_of(t, 0, first_len)  // a body of one element too
                                : make_view(t, {first_len}, {1}, t.offset());
        };
        TensorList scratch(slot_dtype.size());
        for (size_t sl = 0; sl < slot_dtype.size(); ++sl)
          scratch[sl] = empty({first_len}, slot_dtype[sl]);
        TensorList regs(static_cast<size_t>(body.num_inputs) + num_steps);
        std::vector<int64_t> base_offset(regs.size(), -1);  // -1: a scalar or a buffer, not moved
        for (size_t i = 0; i < inputs.size(); ++i) {
          regs[i] = moving_view(inputs[i]);
          if (inputs[i].numel() != 1 || n == 1) base_offset[i] = inputs[i].offset();
        }
        for (size_t k = 0; k < num_steps; ++k) {
          const size_t r = static_cast<size_t>(body.num_inputs) + k;
          if (output_of[k] >= 0) {
            const Tensor& o = out[static_cast<size_t>(output_of[k])];
            regs[r] = make_view(o, {first_len}, {1}, o.offset());
            base_offset[r] = o.offset();
          } else {
            regs[r] = scratch[static_cast<size_t>(slot_of[k])];
          }
        }
        TensorList args, res(1);
        for (int64_t blk = b0; blk < b1; ++blk) {
          const int64_t begin = blk * kBlockElements;
          const int64_t len = std::min(kBlockElements, n - begin);
          for (size_t r = 0; r < regs.size(); ++r) {
            TensorImpl* v = regs[r].impl();
            if (v->shape.empty()) continue;  // a scalar operand
            if (base_offset[r] >= 0) v->offset = base_offset[r] + begin;
            v->shape[0] = len;
          }
          for (size_t k = 0; k < num_steps; ++k) {
            const FusedStep& s = body.steps[k];
            args.clear();
            for (int r : s.args) args.push_back(regs[static_cast<size_t>(r)]);
            res[0] = regs[static_cast<size_t>(body.num_inputs) + k];
            op_def(s.op).kernels[0](args, s.attrs, res);
          }
        }
      });
}

// Saved programs hold a body as integers: each op by name (op kinds are positions in a table
// that grows), its dtype, registers and attributes.
enum AttrTag : int64_t { kInt, kDouble, kBool, kInts, kDType };

void encode(const OpaqueAttr& o, std::vector<int64_t>& ints, TensorList&) {
  const auto& body = dynamic_cast<const FusedBody&>(o);
  ints.push_back(body.num_inputs);
  ints.push_back(static_cast<int64_t>(body.shape.size()));
  ints.insert(ints.end(), body.shape.begin(), body.shape.end());
  ints.push_back(static_cast<int64_t>(body.steps.size()));
  for (const FusedStep& s : body.steps) {
    const std::string name = op_def(s.op).name;
    ints.push_back(static_cast<int64_t>(name.size()));
    for (char c : name) ints.push_back(static_cast<unsigned char>(c));
    ints.push_back(static_cast<int64_t>(s.dtype));
    ints.push_back(static_cast<int64_t>(s.args.size()));
    ints.insert(ints.end(), s.args.begin(), s.args.end());
    ints.push_back(static_cast<int64_t>(s.attrs.size()));
    for (size_t i = 0; i < s.attrs.size(); ++i) {
      const AttrValue& a = s.attrs[i];
      if (auto* v = std::get_if<int64_t>(&a)) {
        ints.insert(ints.end(), {kInt, *v});
      } else if (auto* d = std::get_if<double>(&a)) {
        int64_t bits;
        std::memcpy(&bits, d, sizeof bits);
        ints.insert(ints.end(), {kDouble, bits});
      } else if (auto* b = std::get_if<bool>(&a)) {
        ints.insert(ints.end(), {kBool, *b ? 1 : 0});
      } else if (auto* l = std::get_if<IntList>(&a)) {
        ints.insert(ints.end(), {kInts, static_cast<int64_t>(l->size())});
        ints.insert(ints.end(), l->begin(), l->end());
      } else {
        ints.insert(ints.end(), {kDType, static_cast<int64_t>(std::get<DType>(a))});
      }
    }
  }
  ints.push_back(static_cast<int64_t>(body.outputs.size()));
  ints.insert(ints.end(), body.outputs.begin(), body.outputs.end());
}

OpaquePtr decode(const std::vector<int64_t>& ints, const TensorList&) {
  size_t pos = 0;
  auto next = [&]() {
    NW_CHECK(pos < ints.size(), ValueError, "program file: an elementwise body is truncated");
    return ints[pos++];
  };
  auto count = [&](int64_t limit) {
    const int64_t c = next();
    NW_CHECK(c >= 0 && c <= limit, ValueError, "program file: an elementwise body has a count of ",
             c, " (at most ", limit, ")");
    return c;
  };
  const auto max_items = static_cast<int64_t>(ints.size());
  auto body = std::make_shared<FusedBody>();
  body->num_inputs = static_cast<int>(count(max_items));
  for (int64_t d = 0, rank = count(16); d < rank; ++d) body->shape.push_back(count(INT64_MAX));
  const int64_t steps = count(max_items);
  for (int64_t k = 0; k < steps; ++k) {
    FusedStep s;
    std::string name;
    for (int64_t i = 0, len = count(64); i < len; ++i) name += static_cast<char>(count(255));
    bool found = false;
    for (int op = 0; op < num_registered_ops() && !found; ++op)
      if (name == op_def(static_cast<OpKind>(op)).name) {
        s.op = static_cast<OpKind>(op);
        found = true;
      }
    NW_CHECK(found && (op_def(s.op).traits & kElementwise), ValueError,
             "program file: an elementwise body names op '", name, "', which is not elementwise");
    s.dtype = static_cast<DType>(count(kNumDTypes - 1));
    for (int64_t i = 0, na = count(8); i < na; ++i) {
      const int64_t r = next();  // a register defined before this step
      NW_CHECK(r >= 0 && r < body->num_inputs + k, ValueError,
               "program file: an elementwise step reads register ", r, " before it is written");
      s.args.push_back(static_cast<int>(r));
    }
    for (int64_t i = 0, na = count(16); i < na; ++i) {
      const int64_t tag = next();
      const int64_t v = next();
      switch (tag) {
        case kInt:
          s.attrs.push_back(v);
          break;
        case kDouble: {
          double d;
          std::memcpy(&d, &v, sizeof d);
          s.attrs.push_back(d);
          break;
        }
        case kBool:
          s.attrs.push_back(v != 0);
          break;
        case kInts: {
          NW_CHECK(v >= 0 && v <= max_items, ValueError, "program file: bad int list length");
          IntList l;
          for (int64_t j = 0; j < v; ++j) l.push_back(next());
          s.attrs.push_back(l);
          break;
        }
        case kDType:
          NW_CHECK(v >= 0 && v < kNumDTypes, ValueError, "program file: dtype code ", v);
          s.attrs.push_back(static_cast<DType>(v));
          break;
        default:
          throw ValueError(str_cat("program file: an elementwise body has attribute tag ", tag));
      }
    }
    try {  // the step's operands and attributes as its op declares them
      const OpSignature& sig = *op_def(s.op).signature;
      check_input_count(sig, s.args.size());
      check_attrs(sig, s.attrs);
      check_output_count(sig, 1);
    } catch (const ValueError& e) {
      throw ValueError(str_cat("program file: an elementwise step: ", e.what()));
    }
    body->steps.push_back(std::move(s));
  }
  const int64_t total = body->num_inputs + steps;
  for (int64_t i = 0, no = count(steps); i < no; ++i) {
    const int64_t r = next();
    NW_CHECK(r >= body->num_inputs && r < total, ValueError,
             "program file: an elementwise body returns register ", r);
    body->outputs.push_back(static_cast<int>(r));
  }
  NW_CHECK(pos == ints.size(), ValueError, "program file: an elementwise body has trailing data");
  return body;
}

}  // namespace

std::string FusedBody::describe() const {
  std::string s;
  auto reg = [](int r) { return "r" + std::to_string(r); };
  for (size_t k = 0; k < steps.size(); ++k) {
    const FusedStep& st = steps[k];
    s += (k ? "; " : "") + reg(num_inputs + static_cast<int>(k)) + " = " + op_def(st.op).name + "(";
    for (size_t i = 0; i < st.args.size(); ++i) s += (i ? " " : "") + reg(st.args[i]);
    s += ")";
    for (size_t i = 0; i < st.attrs.size(); ++i) s += (i ? " " : " ") + attr_text(st.attrs[i]);
  }
  s += " ->";
  for (int r : outputs) s += " " + reg(r);
  return s;
}

OpKind fused_elementwise_kind() {
  static const OpKind kind = [] {
    OpDef d;
    d.declaration = "fused_elementwise(Tensor[] operands, object body) -> Tensor[]";
    d.traits = kElementwise;
    d.infer = infer;
    d.kernels = {kernel, nullptr};  // CPU: the steps call the ops' CPU kernels
    const OpKind k = register_extension_op(d);
    register_opaque_codec("elementwise", OpaqueCodec{encode, decode});
    return k;
  }();
  return kind;
}

}  // namespace nodeweave::jit
