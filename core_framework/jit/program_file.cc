#include "core_framework/jit/program_file.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <mutex>
#include <sstream>

#include <unistd.h>

#include "core_framework/engine/functional.h"
#include "core_framework/jit/ir_text.h"
#include "core_framework/jit/object_input.h"
#include "core_framework/runtime/error.h"

namespace nodeweave::jit {

namespace {

constexpr char kMagic[8] = {'N', 'W', 'P', 'R', 'O', 'G', '\r', '\n'};
constexpr size_t kHeaderBytes = 8 + 4 + 8 + 8;
// No rank or name in a valid file comes near these; a corrupt length must not allocate gigabytes.
constexpr uint64_t kMaxRank = 32;
constexpr uint64_t kMaxCount = uint64_t{1} << 32;

std::mutex& codec_mu() {
  static std::mutex mu;
  return mu;
}
std::map<std::string, OpaqueCodec>& codecs() {
  static std::map<std::string, OpaqueCodec> m;
  return m;
}
const OpaqueCodec* find_codec(const std::string& kind) {
  std::lock_guard<std::mutex> lock(codec_mu());
  auto it = codecs().find(kind);
  return it == codecs().end() ? nullptr : &it->second;
}

uint64_t fnv1a(const char* p, size_t n) {
  uint64_t h = 1469598103934665603ull;
  for (size_t i = 0; i < n; ++i) h = (h ^ static_cast<unsigned char>(p[i])) * 1099511628211ull;
  return h;
}

class Writer {
 public:
  template <typename T>
  void pod(T v) {
    out_.append(reinterpret_cast<const char*>(&v), sizeof v);
  }
  void str(const std::string& s) {
    pod<uint64_t>(s.size());
    out_ += s;
  }
  void tensor(const Tensor& t) {
    const Tensor c = contiguous(t.device().is_cpu() ? t : to_device(t, Device{}));
    pod<uint8_t>(static_cast<uint8_t>(c.dtype()));
    pod<uint8_t>(static_cast<uint8_t>(c.dim()));
    for (int64_t d : c.shape()) pod<int64_t>(d);
    out_.append(static_cast<const char*>(c.data_ptr()),
                static_cast<size_t>(c.numel()) * c.itemsize());
  }
  std::string& bytes() { return out_; }

 private:
  std::string out_;
};

class Reader {
 public:
  Reader(const char* p, size_t n, size_t base, const std::string& what)
      : p_(p), n_(n), base_(base), what_(what) {}

  template <typename T>
  T pod() {
    need(sizeof(T));
    T v;
    std::memcpy(&v, p_ + pos_, sizeof v);
    pos_ += sizeof v;
    return v;
  }
  uint64_t count(const char* of) {
    const auto n = pod<uint64_t>();
    NW_CHECK(n < kMaxCount && n <= n_ - pos_ + 1, ValueError, what_, ": corrupt: ", n, " ", of,
             " at byte ", base_ + pos_ - 8, " cannot fit in the file");
    return n;
  }
  std::string str(const char* of) {
    const uint64_t len = count(of);
    need(len);
    std::string s(p_ + pos_, len);
    pos_ += len;
    return s;
  }
  Tensor tensor() {
    const auto code = pod<uint8_t>();
    NW_CHECK(code < kNumDTypes, ValueError, what_, ": corrupt: dtype code ", int(code), " at byte ",
             base_ + pos_ - 1);
    const auto rank = pod<uint8_t>();
    NW_CHECK(rank <= kMaxRank, ValueError, what_, ": corrupt: a tensor of rank ", int(rank));
    Shape shape(rank);
    uint64_t numel = 1;
    for (auto& d : shape) {
      d = pod<int64_t>();
      NW_CHECK(d >= 0 && (d == 0 || numel <= (n_ - pos_) / static_cast<uint64_t>(d) + 1),
               ValueError, what_, ": corrupt: tensor dimension ", d, " at byte ", base_ + pos_ - 8);
      numel *= static_cast<uint64_t>(d);
    }
    const DType dtype = static_cast<DType>(code);
    const uint64_t bytes = numel * dtype_size(dtype);
    need(bytes);
    Tensor t = empty(shape, dtype);
    if (bytes) std::memcpy(t.data_ptr(), p_ + pos_, bytes);
    pos_ += bytes;
    return t;
  }
  bool at_end() const { return pos_ == n_; }
  size_t pos() const { return base_ + pos_; }

 private:
  void need(uint64_t k) {
    NW_CHECK(k <= n_ - pos_, ValueError, what_, ": truncated: ", k, " bytes needed at byte ",
             base_ + pos_, ", ", n_ - pos_, " left");
  }
  const char* p_;
  size_t n_, pos_ = 0, base_;
  const std::string& what_;
};

// The opaque attributes of p the file holds, in node order, attribute order (not the references
// to object inputs: the text says all there is to them, and the caller binds the objects).
std::vector<OpaquePtr*> opaque_slots(Program& p) {
  std::vector<OpaquePtr*> out;
  for (OpNode& n : p.nodes)
    for (size_t i = 0; i < n.attrs.size(); ++i)
      if (auto* o = std::get_if<OpaquePtr>(&n.attrs.mutable_at(i)))
        if (!object_input_at(n.attrs, i)) out.push_back(o);
  return out;
}

}  // namespace

void register_opaque_codec(const std::string& kind, OpaqueCodec codec) {
  std::lock_guard<std::mutex> lock(codec_mu());
  codecs()[kind] = std::move(codec);
}

std::string serialize_program(const Program& program) {
  NW_CHECK(program.object_read.empty(), ValueError,
           "save: the traced code read the structure of a graph argument on the host (",
           program.object_read,
           "); what it computed from it is frozen into the program, which a file would run on any "
           "graph of the same sizes. Compute it with tensor ops, or capture the graph instead of "
           "passing it as an argument");
  for (const OpNode& n : program.nodes)
    NW_CHECK(!(op_def(n.op).traits & kMutatesInputs), ValueError, "save: the program runs ",
             op_def(n.op).name,
             " (an optimizer step), which updates the parameters it holds at every run: a "
             "training step, not a program to deploy. Save a function without the step");
  Program p = program;
  p.compact();
  p.verify();
  Writer w;
  w.str(print(p));
  w.pod<uint64_t>(p.tensors.size());
  for (size_t i = 0; i < p.tensors.size(); ++i) {
    NW_CHECK(p.tensors[i].defined(), ValueError, "save: tensor #", i,
             " of the program is not there (the program was parsed from text)");
    w.tensor(p.tensors[i]);
  }
  w.pod<uint64_t>(p.guards.size());
  for (const Guard& g : p.guards) {
    NW_CHECK(g.expected.defined(), ValueError, "save: guard %", g.value, " has no expected value");
    w.tensor(g.expected);
  }
  std::vector<OpaquePtr*> slots = opaque_slots(p);
  w.pod<uint64_t>(slots.size());
  for (OpaquePtr* slot : slots) {
    const OpaqueAttr& a = **slot;
    NW_CHECK(!dynamic_cast<const PlaceholderAttr*>(&a), ValueError, "save: the program's ",
             a.kind(), " attribute is a placeholder (the program was parsed from text)");
    const OpaqueCodec* codec = find_codec(a.kind());
    NW_CHECK(codec, ValueError, "save: no codec writes opaque attributes of kind '", a.kind(), "'");
    std::vector<int64_t> ints;
    TensorList parts;
    codec->encode(a, ints, parts);
    w.str(a.kind());
    w.pod<uint64_t>(ints.size());
    for (int64_t v : ints) w.pod<int64_t>(v);
    w.pod<uint64_t>(parts.size());
    for (const Tensor& t : parts) w.tensor(t);
  }
  const std::string& payload = w.bytes();
  Writer file;
  file.bytes().append(kMagic, sizeof kMagic);
  file.pod<uint32_t>(kProgramFormatVersion);
  file.pod<uint64_t>(payload.size());
  file.pod<uint64_t>(fnv1a(payload.data(), payload.size()));
  file.bytes() += payload;
  return std::move(file.bytes());
}

Program deserialize_program(const std::string& bytes, const std::string& what) {
  NW_CHECK(bytes.size() >= sizeof kMagic && std::memcmp(bytes.data(), kMagic, sizeof kMagic) == 0,
           ValueError, what, ": not a nodeweave program file (no NWPROG header)");
  Reader head(bytes.data(), bytes.size(), 0, what);
  for (size_t i = 0; i < sizeof kMagic; ++i) head.pod<char>();
  const auto version = head.pod<uint32_t>();
  NW_CHECK(version <= kProgramFormatVersion, ValueError, what,
           ": written in program format version ", version, ", newer than this nodeweave reads (",
           kProgramFormatVersion, "); load it with a newer nodeweave");
  NW_CHECK(version >= 1, ValueError, what, ": corrupt: format version 0");
  const auto size = head.pod<uint64_t>();
  const auto hash = head.pod<uint64_t>();
  NW_CHECK(size == bytes.size() - kHeaderBytes, ValueError, what,
           ": truncated or padded: the header says ", size, " payload bytes, the file holds ",
           bytes.size() - kHeaderBytes);
  const char* payload = bytes.data() + kHeaderBytes;
  NW_CHECK(fnv1a(payload, size) == hash, ValueError, what,
           ": corrupt: the payload's checksum does not match");

  Reader r(payload, size, kHeaderBytes, what);
  Program p = parse(r.str("text bytes"));
  const uint64_t n_tensors = r.count("tensors");
  NW_CHECK(n_tensors == p.tensors.size(), ValueError, what, ": the text declares ",
           p.tensors.size(), " captures and constants but the file holds ", n_tensors, " tensors");
  for (auto& t : p.tensors) {
    const bool scalar = t.defined() && t.impl()->wrapped_number;  // as the text says
    t = r.tensor();
    t.impl()->wrapped_number = scalar;
  }
  for (const Value& v : p.values)
    if (v.source == ValueSource::Capture && v.requires_grad)
      p.tensors[static_cast<size_t>(v.index)].set_requires_grad(true);
  const uint64_t n_guards = r.count("guards");
  NW_CHECK(n_guards == p.guards.size(), ValueError, what, ": the text declares ", p.guards.size(),
           " guards but the file holds ", n_guards, " expected values");
  for (Guard& g : p.guards) g.expected = r.tensor();
  std::vector<OpaquePtr*> slots = opaque_slots(p);
  const uint64_t n_opaque = r.count("opaque attributes");
  NW_CHECK(n_opaque == slots.size(), ValueError, what, ": the text has ", slots.size(),
           " opaque attributes but the file holds ", n_opaque);
  for (OpaquePtr* slot : slots) {
    const std::string kind = r.str("kind bytes");
    NW_CHECK(kind == (*slot)->kind(), ValueError, what, ": opaque attribute of kind '", kind,
             "' where the text has '", (*slot)->kind(), "'");
    const OpaqueCodec* codec = find_codec(kind);
    NW_CHECK(codec, ValueError, what, ": no codec reads opaque attributes of kind '", kind,
             "' (is the layer that defines it loaded?)");
    std::vector<int64_t> ints(r.count("integers"));
    for (auto& v : ints) v = r.pod<int64_t>();
    TensorList parts(r.count("tensors"));
    for (auto& t : parts) t = r.tensor();
    *slot = codec->decode(ints, parts);
  }
  NW_CHECK(r.at_end(), ValueError, what, ": corrupt: ", size - (r.pos() - kHeaderBytes),
           " bytes after the last record");
  p.verify();  // the tensors' types against the text's
  return p;
}

void save_program(const Program& program, const std::string& path) {
  const std::string bytes = serialize_program(program);
  const std::string tmp = path + ".tmp." + std::to_string(::getpid());
  {
    std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
    NW_CHECK(f.good(), std::runtime_error, "save: cannot write ", tmp, ": ", std::strerror(errno));
    f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    f.flush();
    if (!f.good()) {
      std::remove(tmp.c_str());
      throw std::runtime_error(str_cat("save: writing ", tmp, " failed: ", std::strerror(errno)));
    }
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    const std::string err = std::strerror(errno);
    std::remove(tmp.c_str());
    throw std::runtime_error(str_cat("save: cannot move ", tmp, " to ", path, ": ", err));
  }
}

Program load_program(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  NW_CHECK(f.good(), ValueError, "load: cannot open ", path, ": ", std::strerror(errno));
  std::ostringstream ss;
  ss << f.rdbuf();
  return deserialize_program(ss.str(), path);
}

}  // namespace nodeweave::jit
