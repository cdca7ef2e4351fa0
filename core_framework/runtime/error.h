// Exceptions that cross the Python boundary as the matching Python exception type
// (ValueError, TypeError, IndexError, RuntimeError, NotImplementedError).
#pragma once
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace nodeweave {

struct ValueError : std::invalid_argument {
  using std::invalid_argument::invalid_argument;
};
struct TypeError : std::invalid_argument {
  using std::invalid_argument::invalid_argument;
};
struct IndexError : std::out_of_range {
  using std::out_of_range::out_of_range;
};
struct NotImplementedError : std::logic_error {
  using std::logic_error::logic_error;
};
// RuntimeError is std::runtime_error.

// Concatenates streamable pieces into one message: NW_CHECK(x > 0, ValueError, "x must be > 0, got
// ", x).
template <typename... Args>
std::string str_cat(const Args&... args) {
  std::ostringstream os;
  (os << ... << args);
  return os.str();
}

std::string shape_str(const std::vector<int64_t>& shape);  // "[2, 3]"

}  // namespace nodeweave

#define NW_CHECK(cond, ExcType, ...)                               \
  do {                                                             \
    if (!(cond)) throw ExcType(::nodeweave::str_cat(__VA_ARGS__)); \
  } while (0)
