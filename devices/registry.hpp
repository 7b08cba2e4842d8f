// The backend registry: the table of device kinds this build contains, one row each (ref, cpu, and
// cuda). The only place that knows which backends were compiled in: devices/registry.cpp holds the
// project's one #if on the CUDA build switch. Not device choice (devices.hpp).
#pragma once

#include <string>
#include <vector>

#include "nets/backend_kind.hpp"

namespace labpose::devices {

/// Every kind, compiled or not: a kind this build lacks has `compiled` false and says why in
/// problem().
const std::vector<nets::BackendKind>& backend_kinds();

/// The kind --device `name` names (the part before ":N"), or null.
const nets::BackendKind* find_kind(const std::string& name);

}  // namespace labpose::devices
