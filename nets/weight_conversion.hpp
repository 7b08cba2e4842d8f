// ImageNet weights of other programs as labpose backbone tensors: a PyTorch state dict with
// torchvision's, timm's or efficientnet_lite_pytorch's names, renamed where needed and checked
// tensor by tensor against the backbone labpose builds for the architecture. Not a file reader
// (torch_checkpoint.hpp reads .pth files) and not the cache of converted files (pipeline/weights).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "nets/safetensors.hpp"

namespace labpose::nets {

/// The backbone parameters (name -> shape) of `architecture`'s pose network: everything but the
/// head, under the names safetensors files and snapshots use. Throws UsageError for an unknown
/// name.
std::map<std::string, std::vector<std::int64_t>> backbone_shapes(const std::string& architecture);

/// The backbone of `architecture` from a state dict: timm's MobileNetV2 names become torchvision's;
/// classifier weights (fc.*, classifier.*, _fc.*) and batch-norm counters are dropped. Every
/// backbone tensor must be there with its shape and no other tensor may be left, or the Error
/// lists what is missing, mis-shaped and unknown (naming `source`). The metadata records the
/// architecture and `source`.
SafetensorsFile backbone_from_state_dict(std::map<std::string, HostTensor> state,
                                         const std::string& architecture,
                                         const std::string& source);
/// The same as views into what `state` views (a checkpoint's bytes), which must outlive them.
SafetensorsView backbone_from_state_dict(std::map<std::string, TensorView> state,
                                         const std::string& architecture,
                                         const std::string& source);

}  // namespace labpose::nets
