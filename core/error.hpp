// labpose::Error, the one error type of the project: a message a biologist can act on, an optional
// hint, and a kind that the CLI maps to its exit code. Not a logging facility and not for control
// flow.
#pragma once

#include <stdexcept>
#include <string>

namespace labpose {

/// What went wrong, as the CLI reports it: exit code 1, 2 or 3.
enum class ErrorKind {
  failure = 1,      // the command could not do its job (bad file, missing video, ...)
  usage = 2,        // the command line itself is wrong, or the command is not available
  interrupted = 3,  // stopped on request (Ctrl-C); running the same command again resumes
};

/// An error with a lower-case message naming the place (`config.yaml:7:12: ...`) and a hint.
class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& message, std::string hint = {},
                 ErrorKind kind = ErrorKind::failure);

  const std::string& hint() const noexcept { return hint_; }
  ErrorKind kind() const noexcept { return kind_; }
  int exit_code() const noexcept { return static_cast<int>(kind_); }

 private:
  std::string hint_;
  ErrorKind kind_;
};

/// An Error of kind `usage` (exit code 2).
class UsageError : public Error {
 public:
  explicit UsageError(const std::string& message, std::string hint = {})
      : Error(message, std::move(hint), ErrorKind::usage) {}
};

/// Thrown for programmer bugs only: a violated internal invariant (never for bad input).
[[noreturn]] void throw_internal_error(const char* condition, const char* file, int line);

}  // namespace labpose

#define LABPOSE_ASSERT(condition)     \
  ((condition) ? static_cast<void>(0) \
               : ::labpose::throw_internal_error(#condition, __FILE__, __LINE__))
