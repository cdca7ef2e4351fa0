// Whether ops record autograd history on this thread (no_grad / enable_grad).
#pragma once

namespace nodeweave {

class GradMode {
 public:
  static bool is_enabled();
  static void set_enabled(bool enabled);
};

// RAII guard: sets grad mode for a scope and restores the previous value.
class AutoGradMode {
 public:
  explicit AutoGradMode(bool enabled) : prev_(GradMode::is_enabled()) {
    GradMode::set_enabled(enabled);
  }
  ~AutoGradMode() { GradMode::set_enabled(prev_); }
  AutoGradMode(const AutoGradMode&) = delete;
  AutoGradMode& operator=(const AutoGradMode&) = delete;

 private:
  bool prev_;
};

struct NoGradGuard : AutoGradMode {
  NoGradGuard() : AutoGradMode(false) {}
};

}  // namespace nodeweave
