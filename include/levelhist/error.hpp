// levelhist: the one exception type the library throws.
#pragma once
#include <stdexcept>
#include <string>

namespace levelhist {

// What kind of mistake an error reports; the CLI maps it to its exit status
// (usage -> 2, everything else -> 1).
enum class ErrorKind {
  usage,        // a bad option or argument: the caller asked for something meaningless
  input,        // bad data or bad bins: a missing file, a ragged sample count, reversed range
  unsupported,  // a strategy or backend that cannot take this problem
  cuda,         // a CUDA runtime call failed; the message carries CUDA's own text
  internal,     // a bug in levelhist
};

class Error : public std::runtime_error {
 public:
  Error(ErrorKind kind, const std::string& message) : std::runtime_error(message), kind_(kind) {}
  ErrorKind kind() const noexcept { return kind_; }

 private:
  ErrorKind kind_;
};

}  // namespace levelhist
