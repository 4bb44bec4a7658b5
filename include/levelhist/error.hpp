// levelhist: the one exception type the library throws.
//
// An Error carries what went wrong (message), how to put it right in the
// library's own terms (fix), the kind of mistake (kind: what a front end maps
// to an exit status) and what part of the request it is about (subject: what a
// front end maps to its own spelling of the fix, e.g. a command-line flag).
#pragma once
#include <stdexcept>
#include <string>

namespace levelhist {

// What kind of mistake an error reports.
enum class ErrorKind {
  usage,        // a bad option or argument: the caller asked for something meaningless
  input,        // bad data or bad bins: a missing file, a ragged sample count, reversed range
  unsupported,  // a strategy or backend that cannot take this problem
  cuda,         // a CUDA runtime call failed; the message carries CUDA's own text
  resource,     // memory (host or device) or another resource ran out
  internal,     // a bug in levelhist
};

// What part of a request an error is about.
enum class ErrorSubject {
  none,
  strategy,   // Options::strategy
  backend,    // Options::backend, or no GPU / no CUDA backend for it
  device,     // Options::device
  binning,    // the bins: counts, ranges, edges
  layout,     // pixels: channels, active channels, rows, pitch
  weights,    // weight type or weight count
  threads,    // Options::threads
  workspace,  // a device workspace the caller passed
  memory,     // an allocation
  data,       // the samples themselves
  batch,      // batches: segments, offsets, tiles
  axes,       // N-d: the axes and their columns
};

class Error : public std::runtime_error {
 public:
  Error(ErrorKind kind, const std::string& message, const std::string& fix = {},
        ErrorSubject subject = ErrorSubject::none)
      : std::runtime_error(fix.empty() ? message : message + "; " + fix),
        kind_(kind),
        subject_(subject),
        message_(message),
        fix_(fix) {}

  ErrorKind kind() const noexcept { return kind_; }
  ErrorSubject subject() const noexcept { return subject_; }
  // What went wrong, without the fix (what() is "message; fix").
  const std::string& message() const noexcept { return message_; }
  // How to put it right, in the library's terms; may be empty.
  const std::string& fix() const noexcept { return fix_; }

 private:
  ErrorKind kind_;
  ErrorSubject subject_;
  std::string message_;
  std::string fix_;
};

}  // namespace levelhist
