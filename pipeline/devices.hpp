// Device choice for every command (--device auto|cpu|cuda|cuda:N, and ref for tests): the one place
// that knows which backends this build contains. Asking for a backend that is not there is an error
// that says so; nothing is silently substituted.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "nets/backend.hpp"

namespace labpose::pipeline {

/// The backends compiled into this build: "ref", "cpu" (and "cuda" when built with CUDA).
std::vector<std::string> compiled_backends();

/// A backend for `device`: "cpu", "ref" (the slow reference, for checks), "cuda", "cuda:N", or
/// "auto" (a usable GPU if there is one, else the CPU; the choice is logged). Throws a usage error
/// for an unknown name and an Error when the device is not usable, saying why.
std::unique_ptr<nets::Backend> make_backend(const std::string& device);

}  // namespace labpose::pipeline
