#include "core_framework/runtime/generator.h"

namespace nodeweave {

Generator& default_generator() {
  static Generator g;
  return g;
}

}  // namespace nodeweave
