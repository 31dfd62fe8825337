#include "traces/framework_ops.h"

#include <cctype>
#include <unordered_map>
#include <vector>

namespace fg {

namespace {

bool starts_with(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }
bool ends_with(std::string_view s, std::string_view p) {
  return s.size() >= p.size() && s.substr(s.size() - p.size()) == p;
}

// Overload names written in lower case (torchgen joins name and overload
// with '_', so only known ones can be split off; capitalised ones always can).
bool lowercase_overload(std::string_view o) {
  static const char* const kKnown[] = {"out",    "dtype",  "int",    "self",       "dim",   "names",  "using_ints",
                                       "correction", "memory_format", "device", "other", "input", "values",
                                       "grad_input", "default", "prim_dtype", "dtype_layout", "vec", "t", "dimname"};
  for (const char* k : kKnown) {
    std::string_view kv(k);
    if (o == kv) return true;
    // "dim_IntList", "names_dim": a known word, then more overload text.
    if (o.size() > kv.size() && starts_with(o, kv) && o[kv.size()] == '_') return true;
  }
  return false;
}

// at::_ops struct name -> op name: "add__Tensor" -> "add_", "sum_dim_IntList" -> "sum".
std::string op_of_struct(std::string_view s) {
  for (size_t i = 1; i + 1 < s.size(); ++i) {
    if (s[i] != '_') continue;
    std::string_view rest = s.substr(i + 1);
    if (std::isupper(static_cast<unsigned char>(rest[0])) || lowercase_overload(rest)) return std::string(s.substr(0, i));
  }
  return std::string(s);
}

bool is_identifier(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') return false;
  return true;
}

// A function of the program itself, not library code compiled into it
// (templates, inlined headers) nor start-up glue.
bool own_function(std::string_view name) {
  if (name.empty() || name.front() == '[' || name == "main" || name == "_start" || name == "_init" ||
      name == "_fini" || name == "frame_dummy" || starts_with(name, "__") || starts_with(name, "_GLOBAL_"))
    return false;
  for (std::string_view lib : {"std::", "__gnu_cxx::", "boost::", "c10::", "at::", "torch::", "caffe2::", "void ",
                               "decltype(", "fmt::", "google::", "operator new", "operator delete"})
    if (starts_with(name, lib)) return false;
  return true;
}

}  // namespace

std::string framework_op_name(std::string_view f) {
  if (starts_with(f, "at::_ops::") && ends_with(f, "::call")) {
    std::string_view s = f.substr(10, f.size() - 10 - 6);
    if (is_identifier(s)) return "aten::" + op_of_struct(s);
    return {};
  }
  if (starts_with(f, "torch::autograd::") && ends_with(f, "::apply")) {
    std::string_view s = f.substr(17, f.size() - 17 - 7);
    if (starts_with(s, "generated::")) s = s.substr(11);
    if (!is_identifier(s)) return {};
    // Generated backward nodes go by their class name; engine-internal
    // nodes (AccumulateGrad, CopySlices, GraphRoot) by their full name.
    if (ends_with(s, "Backward") || ends_with(s, "Backwards") ||
        (s.find("Backward") != std::string_view::npos && std::isdigit(static_cast<unsigned char>(s.back()))))
      return std::string(s);
    return "torch::autograd::" + std::string(s);
  }
  if (starts_with(f, "torch::optim::")) {
    std::string_view s = f.substr(14);
    size_t sep = s.find("::");
    if (sep != std::string_view::npos && is_identifier(s.substr(0, sep))) {
      std::string_view cls = s.substr(0, sep), m = s.substr(sep + 2);
      if (m == "step" || m == "zero_grad")
        return "Optimizer." + std::string(m) + "#" + std::string(cls) + "." + std::string(m);
    }
  }
  return {};
}

std::string autograd_evaluate_frame(std::string_view node) {
  return "autograd::engine::evaluate_function: " + std::string(node);
}

FoldedProfile framework_op_view(const FoldedProfile& in, bool keep_root) {
  FoldedProfile out;
  out.units = in.units;
  // Traces count microseconds; cpu-clock periods are nanoseconds.
  double scale = 1.0;
  if (in.units == "ns") {
    scale = 1e-3;
    out.units = "us";
  }
  // The main executable: the object of the frame "main", when known.
  std::string_view exe;
  FrameId main_id = in.find_frame("main");
  if (main_id != FoldedProfile::kNoFrame) exe = in.frame_object(main_id);
  // Per input frame: its output frames (0, 1 or 2), computed once.
  struct Mapped {
    bool done = false;
    FrameId a = FoldedProfile::kNoFrame, b = FoldedProfile::kNoFrame;
  };
  std::vector<Mapped> map(in.frame_count());
  FrameId no_op = out.intern("[no op]");
  std::vector<FrameId> frames;
  in.for_each_stack([&](const std::vector<FrameId>& f, double w) {
    frames.clear();
    if (f.empty()) return;
    if (keep_root) frames.push_back(out.intern(in.frame_name(f[0])));
    const size_t base = frames.size();
    for (size_t i = 1; i < f.size(); ++i) {
      Mapped& m = map[f[i]];
      if (!m.done) {
        m.done = true;
        std::string_view name = in.frame_name(f[i]);
        std::string op = framework_op_name(name);
        if (!op.empty()) {
          if (starts_with(name, "torch::autograd::")) {
            m.a = out.intern(autograd_evaluate_frame(op));
            m.b = out.intern(op);
          } else {
            m.a = out.intern(op);
          }
        } else if (is_trace_op_frame(name)) {  // already an op view (a folded file of one)
          m.a = out.intern(name);
        } else if (!exe.empty() && in.frame_object(f[i]) == exe && own_function(name)) {
          m.a = out.intern(name);
        }
      }
      for (FrameId id : {m.a, m.b}) {
        if (id == FoldedProfile::kNoFrame) continue;
        if (frames.size() > base && frames.back() == id) continue;  // one op recorded once
        frames.push_back(id);
      }
    }
    if (frames.size() == base) frames.push_back(no_op);
    out.add(frames, w * scale);
  });
  return out;
}

bool is_trace_op_frame(std::string_view f) {
  if (starts_with(f, "torch::autograd::")) {  // AccumulateGrad, CopySlices; not Engine::evaluate_function
    std::string_view node = f.substr(17);
    return is_identifier(node) && std::isupper(static_cast<unsigned char>(node[0]));
  }
  return starts_with(f, "aten::") || starts_with(f, "autograd::engine::evaluate_function: ") ||
         starts_with(f, "Optimizer.") || starts_with(f, "[gpu") ||
         (f.find("Backward") != std::string_view::npos && is_identifier(f));
}

FoldedProfile trace_op_view(const FoldedProfile& in) {
  FoldedProfile out;
  out.units = in.units;
  std::vector<FrameId> map(in.frame_count(), FoldedProfile::kNoFrame);
  std::vector<bool> done(in.frame_count(), false);
  FrameId no_op = out.intern("[no op]");
  std::vector<FrameId> frames;
  in.for_each_stack([&](const std::vector<FrameId>& f, double w) {
    frames.clear();
    for (FrameId id : f) {
      if (!done[id]) {
        done[id] = true;
        std::string_view name = in.frame_name(id);
        if (is_trace_op_frame(name) && name != "[gpu] unattributed") map[id] = out.intern(name);
      }
      if (map[id] != FoldedProfile::kNoFrame) frames.push_back(map[id]);
    }
    if (frames.empty()) frames.push_back(no_op);
    out.add(frames, w);
  });
  return out;
}

}  // namespace fg
