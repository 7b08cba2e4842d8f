// safetensors and .npy files: round trips, what PyTorch's converters write, and damaged files
// refused with messages that name the file and the problem.
#include <gtest/gtest.h>

#include <cstring>
#include <limits>

#include "core/error.hpp"
#include "nets/models/models.hpp"
#include "nets/npy.hpp"
#include "nets/ref/backend.hpp"
#include "nets/safetensors.hpp"
#include "tests/support/test_support.hpp"

namespace labpose::nets {
namespace {
namespace fs = std::filesystem;
using ::labpose::testing::TempDir;

TEST(Safetensors, RoundTripKeepsNamesShapesValuesAndMetadata) {
  const TempDir dir;
  SafetensorsFile file;
  file.tensors["conv1.weight"] = {{2, 1, 3, 3}, std::vector<float>(18)};
  for (std::size_t i = 0; i < 18; ++i)
    file.tensors["conv1.weight"].values[i] = 0.5F * static_cast<float>(i) - 3.0F;
  file.tensors["bn1.bias"] = {{2}, {1.5F, -2.25F}};
  file.tensors["scalar"] = {{}, {7.0F}};
  file.metadata["architecture"] = "resnet_50";
  write_safetensors(file, dir / "w.safetensors");
  const SafetensorsFile back = read_safetensors(dir / "w.safetensors");
  ASSERT_EQ(back.tensors.size(), 3u);
  EXPECT_EQ(back.tensors.at("conv1.weight").shape, (std::vector<std::int64_t>{2, 1, 3, 3}));
  EXPECT_EQ(back.tensors.at("conv1.weight").values, file.tensors["conv1.weight"].values);
  EXPECT_EQ(back.tensors.at("bn1.bias").values, (std::vector<float>{1.5F, -2.25F}));
  EXPECT_EQ(back.tensors.at("scalar").values, std::vector<float>{7.0F});
  EXPECT_EQ(back.metadata.at("architecture"), "resnet_50");
}

// Writes a file with a hand-made header (for the other dtypes and for lies).
void write_raw(const fs::path& path, const std::string& header, const std::string& data) {
  std::string bytes(8, '\0');
  for (int i = 0; i < 8; ++i)
    bytes[static_cast<std::size_t>(i)] = static_cast<char>((header.size() >> (8 * i)) & 0xFF);
  ::labpose::testing::write_text(path, bytes + header + data);
}

TEST(Safetensors, ReadsHalfBfloatAndDoubleAndSkipsBatchCounters) {
  const TempDir dir;
  std::string data;
  const std::uint16_t half[2] = {0x3C00, 0xC000};    // 1.0, -2.0
  const std::uint16_t bfloat[2] = {0x3FC0, 0x4049};  // 1.5, 3.140625
  const double wide[1] = {0.125};
  const std::int64_t counter[1] = {42};
  data.append(reinterpret_cast<const char*>(half), 4);
  data.append(reinterpret_cast<const char*>(bfloat), 4);
  data.append(reinterpret_cast<const char*>(wide), 8);
  data.append(reinterpret_cast<const char*>(counter), 8);
  write_raw(
      dir / "mixed.safetensors",
      R"({"h":{"dtype":"F16","shape":[2],"data_offsets":[0,4]},"b":{"dtype":"BF16","shape":[2],"data_offsets":[4,8]},)"
      R"("d":{"dtype":"F64","shape":[1],"data_offsets":[8,16]},"bn1.num_batches_tracked":{"dtype":"I64","shape":[],"data_offsets":[16,24]}})",
      data);
  const SafetensorsFile file = read_safetensors(dir / "mixed.safetensors");
  EXPECT_EQ(file.tensors.at("h").values, (std::vector<float>{1.0F, -2.0F}));
  EXPECT_EQ(file.tensors.at("b").values, (std::vector<float>{1.5F, 3.140625F}));
  EXPECT_EQ(file.tensors.at("d").values, std::vector<float>{0.125F});
  EXPECT_EQ(file.tensors.count("bn1.num_batches_tracked"), 0u);
}

TEST(Safetensors, DamagedFilesAreRefusedWithTheReason) {
  const TempDir dir;
  SafetensorsFile file;
  file.tensors["w"] = {{4, 4}, std::vector<float>(16, 1.0F)};
  write_safetensors(file, dir / "good.safetensors");
  const std::string good = ::labpose::testing::read_text(dir / "good.safetensors");
  ::labpose::testing::write_text(dir / "truncated.safetensors", good.substr(0, good.size() - 10));
  ::labpose::testing::write_text(dir / "tiny.safetensors", "abc");
  write_raw(dir / "json.safetensors", "{not json", "");
  write_raw(dir / "dtype.safetensors", R"({"w":{"dtype":"I32","shape":[1],"data_offsets":[0,4]}})",
            "abcd");
  write_raw(dir / "lies.safetensors", R"({"w":{"dtype":"F32","shape":[2,2],"data_offsets":[0,8]}})",
            std::string(16, '\0'));
  write_raw(dir / "huge.safetensors", "", "");
  EXPECT_NE(testing::error_text([&] {
              read_safetensors(dir / "truncated.safetensors");
            }).find("the data section has only"),
            std::string::npos);
  EXPECT_NE(testing::error_text([&] {
              read_safetensors(dir / "tiny.safetensors");
            }).find("it has only 3 bytes"),
            std::string::npos);
  EXPECT_NE(testing::error_text([&] {
              read_safetensors(dir / "json.safetensors");
            }).find("not valid JSON"),
            std::string::npos);
  EXPECT_NE(testing::error_text([&] {
              read_safetensors(dir / "dtype.safetensors");
            }).find("is I32, not floating point"),
            std::string::npos);
  EXPECT_NE(testing::error_text([&] {
              read_safetensors(dir / "lies.safetensors");
            }).find("should take 16 bytes but its offsets span 8"),
            std::string::npos);
  EXPECT_NE(testing::error_text([&] {
              read_safetensors(dir / "missing.safetensors");
            }).find("missing.safetensors"),
            std::string::npos);
}

// Issue 16, defect 7: NaN or infinite weights were accepted and only showed up in training as a
// NaN loss blamed on the learning rate.
TEST(Safetensors, NanOrInfiniteWeightsAreRefusedNamingTheFileAndTensor) {
  const TempDir dir;
  SafetensorsFile file;
  file.tensors["blocks.3.0.conv_pw.weight"] = {{4, 4}, std::vector<float>(16, 0.5F)};
  file.tensors["blocks.0.bias"] = {{2}, {1.0F, 2.0F}};
  for (std::size_t i = 0; i < 12; ++i)
    file.tensors["blocks.3.0.conv_pw.weight"].values[i] = std::numeric_limits<float>::quiet_NaN();
  write_safetensors(file, dir / "lite0.safetensors");
  const std::string nan = testing::error_text([&] { read_safetensors(dir / "lite0.safetensors"); });
  EXPECT_NE(nan.find((dir / "lite0.safetensors").string() +
                     ": tensor \"blocks.3.0.conv_pw.weight\" has 12 NaN values"),
            std::string::npos)
      << nan;
  try {
    read_safetensors(dir / "lite0.safetensors");
  } catch (const Error& error) {
    EXPECT_NE(error.hint().find("convert the weights again"), std::string::npos) << error.hint();
  }

  file.tensors["blocks.3.0.conv_pw.weight"].values.assign(16, 0.5F);
  file.tensors["blocks.0.bias"].values[1] = -std::numeric_limits<float>::infinity();
  write_safetensors(file, dir / "inf.safetensors");
  const std::string inf = testing::error_text([&] { read_safetensors(dir / "inf.safetensors"); });
  EXPECT_NE(inf.find("tensor \"blocks.0.bias\" has 1 infinite values"), std::string::npos) << inf;

  // Half-precision infinity, and a double too large for float32, are refused too.
  const std::uint16_t half[2] = {0x3C00, 0x7C00};  // 1.0, +inf
  write_raw(dir / "half.safetensors", R"({"h":{"dtype":"F16","shape":[2],"data_offsets":[0,4]}})",
            std::string(reinterpret_cast<const char*>(half), 4));
  EXPECT_NE(testing::error_text([&] {
              read_safetensors(dir / "half.safetensors");
            }).find("tensor \"h\" has 1 infinite values"),
            std::string::npos);
  const double wide[1] = {1e300};
  write_raw(dir / "wide.safetensors", R"({"d":{"dtype":"F64","shape":[1],"data_offsets":[0,8]}})",
            std::string(reinterpret_cast<const char*>(wide), 8));
  EXPECT_NE(testing::error_text([&] {
              read_safetensors(dir / "wide.safetensors");
            }).find("beyond float32's range"),
            std::string::npos);
}

// A snapshot (train --resume, evaluate, analyze) with NaN parameters is refused when it is read.
// Overlapping tensors (one aliasing another), holes and bytes after the last tensor are refused,
// as the format requires.
TEST(Safetensors, OverlappingTensorsHolesAndTrailingBytesAreRefused) {
  const TempDir dir;
  const std::string data(32, '\0');
  write_raw(dir / "overlap.safetensors",
            R"({"a":{"dtype":"F32","shape":[4],"data_offsets":[0,16]},)"
            R"("b":{"dtype":"F32","shape":[4],"data_offsets":[8,24]},)"
            R"("c":{"dtype":"F32","shape":[2],"data_offsets":[24,32]}})",
            data);
  const std::string overlap =
      testing::error_text([&] { read_safetensors(dir / "overlap.safetensors"); });
  EXPECT_NE(overlap.find("tensors \"a\" (bytes [0, 16)) and \"b\" (bytes [8, 24)) overlap"),
            std::string::npos)
      << overlap;
  write_raw(dir / "same.safetensors",
            R"({"a":{"dtype":"F32","shape":[8],"data_offsets":[0,32]},)"
            R"("b":{"dtype":"F32","shape":[8],"data_offsets":[0,32]}})",
            data);
  EXPECT_NE(
      testing::error_text([&] { read_safetensors(dir / "same.safetensors"); }).find("overlap"),
      std::string::npos);
  write_raw(dir / "hole.safetensors",
            R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
            R"("b":{"dtype":"F32","shape":[4],"data_offsets":[16,32]}})",
            data);
  EXPECT_NE(testing::error_text([&] {
              read_safetensors(dir / "hole.safetensors");
            }).find("bytes [8, 16) of the data section, before tensor \"b\", belong to no tensor"),
            std::string::npos);
  write_raw(dir / "tail.safetensors", R"({"a":{"dtype":"F32","shape":[4],"data_offsets":[0,16]}})",
            data);
  EXPECT_NE(testing::error_text([&] {
              read_safetensors(dir / "tail.safetensors");
            }).find("the last 16 bytes of the data section belong to no tensor"),
            std::string::npos);
}

// Every header field is checked against the file before anything is allocated.
TEST(Safetensors, HeaderFieldsAreCheckedBeforeAllocating) {
  const TempDir dir;
  const auto message_for = [&](const std::string& header, const std::string& data) {
    write_raw(dir / "w.safetensors", header, data);
    return testing::error_text([&] { read_safetensors(dir / "w.safetensors"); });
  };
  // 2^62 x 4 float32 is 2^66 bytes: the byte count wrapped to 0 and matched empty offsets.
  EXPECT_NE(message_for(
                R"({"w":{"dtype":"F32","shape":[4611686018427387904,4],"data_offsets":[0,0]}})", "")
                .find("too large to exist"),
            std::string::npos);
  EXPECT_NE(message_for(R"({"w":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},)"
                        R"("w":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})",
                        std::string(8, '\0'))
                .find("names tensor \"w\" twice"),
            std::string::npos);
  EXPECT_NE(message_for(R"({"w":{"dtype":"F32","shape":[-1],"data_offsets":[0,4]}})",
                        std::string(4, '\0'))
                .find("invalid shape [-1]"),
            std::string::npos);
  EXPECT_NE(message_for(R"({"w":{"dtype":"F32","shape":[1.5],"data_offsets":[0,4]}})",
                        std::string(4, '\0'))
                .find("invalid shape"),
            std::string::npos);
  EXPECT_NE(
      message_for(R"({"w":{"dtype":"C64","shape":[1],"data_offsets":[0,8]}})", std::string(8, '\0'))
          .find("unknown dtype C64"),
      std::string::npos);
  EXPECT_NE(message_for(R"({"__metadata__":{"format":7}})", "").find("is not a string"),
            std::string::npos);
  EXPECT_NE(message_for(R"({"w\u001b[31m":{"dtype":"F32","shape":[1],"data_offsets":[0,8]}})",
                        std::string(8, '\0'))
                .find("tensor \"w\\x1b[31m\""),
            std::string::npos);
  // A header length beyond the format's 100 MB bound is refused before it is read.
  std::string huge(8, '\0');
  huge[4] = 1;  // 2^32 bytes
  ::labpose::testing::write_text(dir / "huge.safetensors", huge + "{}");
  EXPECT_NE(testing::error_text([&] {
              read_safetensors(dir / "huge.safetensors");
            }).find("a safetensors header has at most 100000000 bytes"),
            std::string::npos);
}

TEST(LoadWeights, ListsMissingMisshapedAndUnexpectedTensors) {
  ref::RefBackend backend;
  auto net = build_pose_net(backend, {"mobilenet_v2_0.35", 4, true});
  SafetensorsFile weights = net_weights(*net);
  EXPECT_NO_THROW(load_weights(*net, weights, LoadScope::all, "ok.safetensors"));
  weights.tensors.erase("features.3.conv.1.0.weight");
  weights.tensors["head.score.weight"].shape = {1280, 5, 3, 3};
  weights.tensors["bogus.weight"] = {{1}, {0.0F}};
  weights.tensors["classifier.1.weight"] = {{1000, 1280}, std::vector<float>(1280000)};  // ignored
  weights.tensors["features.0.1.num_batches_tracked"] = {{}, {0.0F}};                    // ignored
  const std::string message =
      testing::error_text([&] { load_weights(*net, weights, LoadScope::all, "bad.safetensors"); });
  EXPECT_NE(message.find("bad.safetensors do not fit this network"), std::string::npos) << message;
  EXPECT_NE(message.find("1 missing (features.3.conv.1.0.weight)"), std::string::npos) << message;
  EXPECT_NE(message.find("1 with the wrong shape (head.score.weight (file (1280, 5, 3, 3), network "
                         "(1280, 4, 3, 3)))"),
            std::string::npos)
      << message;
  EXPECT_NE(message.find("1 not in the network (bogus.weight)"), std::string::npos) << message;
}

TEST(LoadWeights, BackboneScopeIgnoresTheHead) {
  ref::RefBackend backend;
  auto source = build_pose_net(backend, {"resnet_50", 2, true});
  initialize_pose_net(*source, 3);
  auto target = build_pose_net(backend, {"resnet_50", 7, true});  // another head size
  SafetensorsFile weights = net_weights(*source);
  load_weights(*target, weights, LoadScope::backbone, "backbone.safetensors");
  std::vector<float> a(9408), b(9408);
  backend.copy_to_host(source->find_parameter("conv1.weight")->value, a.data());
  backend.copy_to_host(target->find_parameter("conv1.weight")->value, b.data());
  EXPECT_EQ(a, b);
  EXPECT_THROW(load_weights(*target, weights, LoadScope::all, "backbone.safetensors"), Error);
}

TEST(LoadWeights, EfficientNetLiteOfAnotherSizeOrTruncatedNamesTheFileAndTensors) {
  ref::RefBackend backend;
  auto lite0 = build_pose_net(backend, {"efficientnet_lite0", 4, true});
  auto lite1 = build_pose_net(backend, {"efficientnet_lite1", 4, true});
  const ::labpose::testing::TempDir dir;
  const fs::path file = dir / "efficientnet_lite0.safetensors";
  write_safetensors(net_weights(*lite0), file);

  const std::string wrong = testing::error_text(
      [&] { load_weights(*lite1, read_safetensors(file), LoadScope::backbone, file); });
  EXPECT_NE(wrong.find(file.string()), std::string::npos) << wrong;
  // lite1 has 21 blocks to lite0's 16, and its second group 3 blocks to lite0's 2.
  EXPECT_NE(wrong.find("75 missing (_blocks.16._expand_conv.weight"), std::string::npos) << wrong;
  EXPECT_NE(
      wrong.find("with the wrong shape (_blocks.3._depthwise_conv.weight (file (144, 1, 5, 5), "
                 "network (144, 1, 3, 3))"),
      std::string::npos)
      << wrong;
  auto mobilenet = build_pose_net(backend, {"mobilenet_v2_0.35", 4, true});
  const std::string other = testing::error_text(
      [&] { load_weights(*mobilenet, read_safetensors(file), LoadScope::backbone, file); });
  EXPECT_NE(other.find("missing (features.0.0.weight"), std::string::npos) << other;
  EXPECT_NE(other.find("not in the network (_blocks."), std::string::npos) << other;

  const std::string whole = ::labpose::testing::read_text(file);
  const fs::path truncated = dir / "truncated.safetensors";
  ::labpose::testing::write_text(truncated, whole.substr(0, whole.size() / 2));
  const std::string cut = testing::error_text([&] { read_safetensors(truncated); });
  EXPECT_NE(cut.find(truncated.string()), std::string::npos) << cut;
  EXPECT_NE(cut.find("the data section has only"), std::string::npos) << cut;
}

TEST(Npy, RoundTripAndWhatNumpyWrites) {
  const TempDir dir;
  NpyArray array{{2, 3}, {1, 2, 3, 4, 5, 6.5F}};
  write_npy(array, dir / "a.npy");
  const NpyArray back = read_npy(dir / "a.npy");
  EXPECT_EQ(back.shape, array.shape);
  EXPECT_EQ(back.values, array.values);
  write_npy({{5}, {1, 2, 3, 4, 5}}, dir / "v.npy");
  EXPECT_EQ(read_npy(dir / "v.npy").shape, std::vector<std::int64_t>{5});
  const std::string bad_order = std::string("\x93NUMPY\x01\x00", 8) + std::string("\x46\x00", 2) +
                                "{'descr': '<f4', 'fortran_order': True, 'shape': (1,), }" +
                                std::string(15, ' ') + "\n" + std::string(4, '\0');
  ::labpose::testing::write_text(dir / "f.npy", bad_order);
  EXPECT_NE(testing::error_text([&] { read_npy(dir / "f.npy"); }).find("Fortran order"),
            std::string::npos);
  ::labpose::testing::write_text(dir / "t.npy", "not an array");
  EXPECT_NE(testing::error_text([&] { read_npy(dir / "t.npy"); }).find("does not start with"),
            std::string::npos);
}

// Writes a version 1.0 .npy with the given header dictionary (padded as numpy pads) and data.
void write_npy_raw(const fs::path& path, std::string header, const std::string& data) {
  header.append(63 - (10 + header.size()) % 64, ' ');
  header += '\n';
  std::string bytes = std::string("\x93NUMPY\x01\x00", 8);
  bytes += static_cast<char>(header.size() & 0xFF);
  bytes += static_cast<char>(header.size() >> 8);
  ::labpose::testing::write_text(path, bytes + header + data);
}

// Issue 16, defect 9d: a huge shape in the header made read_npy allocate it before checking the
// file ("vector::_M_default_append"); the shape is now checked against the file size first.
TEST(Npy, HugeOrOverflowingShapesAreRefusedBeforeAllocating) {
  const TempDir dir;
  const fs::path file = dir / "batch.npy";
  write_npy_raw(file,
                "{'descr': '<f4', 'fortran_order': False, 'shape': (100000000000, 3, 224, 224), }",
                std::string(16, '\0'));
  const std::string huge = testing::error_text([&] { read_npy(file); });
  EXPECT_NE(
      huge.find(file.string() + " is not a NumPy .npy array labpose can read: its shape "
                                "(100000000000, 3, 224, 224) needs 60211200000000000 bytes of "
                                "data but the file has 16 (it is cut short)"),
      std::string::npos)
      << huge;
  // 2^62 float32 values are 2^64 bytes, which wrapped to 0 and passed the size check: the
  // allocation then failed with "vector::_M_default_append".
  write_npy_raw(file, "{'descr': '<f4', 'fortran_order': False, 'shape': (4611686018427387904,), }",
                "");
  EXPECT_NE(testing::error_text([&] {
              read_npy(file);
            }).find("its shape holds more values than can exist"),
            std::string::npos);
  // 2^62 x 8 values wrap to 0 in 64 bits.
  write_npy_raw(
      file, "{'descr': '<f4', 'fortran_order': False, 'shape': (4611686018427387904, 8), }", "");
  EXPECT_NE(testing::error_text([&] { read_npy(file); }).find("more values than can exist"),
            std::string::npos);
  write_npy_raw(
      file, "{'descr': '<f4', 'fortran_order': False, 'shape': (" + std::string(300, '9') + ",), }",
      "");
  EXPECT_NE(testing::error_text([&] { read_npy(file); }).find("a dimension too large to exist"),
            std::string::npos);
  write_npy_raw(file, "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }",
                std::string(12, '\0'));
  EXPECT_NE(testing::error_text([&] {
              read_npy(file);
            }).find("needs 8 bytes of data but the file has 12"),
            std::string::npos);
}

TEST(Npy, UnsupportedDtypesAndBadHeaderDictionariesAreNamed) {
  const TempDir dir;
  const fs::path file = dir / "a.npy";
  const auto message_for = [&](const std::string& header, const std::string& data) {
    write_npy_raw(file, header, data);
    return testing::error_text([&] { read_npy(file); });
  };
  EXPECT_NE(
      message_for("{'descr': '>f4', 'fortran_order': False, 'shape': (1,), }", std::string(4, '\0'))
          .find("big-endian (>f4)"),
      std::string::npos);
  EXPECT_NE(
      message_for("{'descr': '<i8', 'fortran_order': False, 'shape': (1,), }", std::string(8, '\0'))
          .find("dtype <i8 (expected float32 '<f4'"),
      std::string::npos);
  EXPECT_NE(message_for("{'descr': [('x', '<f4')], 'fortran_order': False, 'shape': (1,), }",
                        std::string(4, '\0'))
                .find("structured array"),
            std::string::npos);
  EXPECT_NE(message_for("{'descr': '<f4', 'shape': (1,), }", std::string(4, '\0'))
                .find("its header has no 'fortran_order'"),
            std::string::npos);
  EXPECT_NE(message_for("{'descr': '<f4', 'fortran_order': False, 'shape': (1,), 'x': 1}",
                        std::string(4, '\0'))
                .find("unknown key 'x'"),
            std::string::npos);
  EXPECT_NE(message_for("{'descr': '<f4', 'fortran_order': False, 'shape': (-1,), }", "")
                .find("not a tuple of whole numbers"),
            std::string::npos);
  EXPECT_NE(
      message_for("{'descr': '<f4', 'fortran_order': Maybe, 'shape': (1,), }", std::string(4, '\0'))
          .find("neither True nor False"),
      std::string::npos);
  // What Python 2's numpy wrote, with double quotes and no trailing comma, still reads.
  write_npy_raw(file, R"({"descr": "<f4", "fortran_order": False, "shape": (1L, 2L)})",
                std::string(8, '\0'));
  EXPECT_EQ(read_npy(file).shape, (std::vector<std::int64_t>{1, 2}));
  write_npy_raw(file, "{'descr': '<f8', 'fortran_order': False, 'shape': (), }",
                std::string(8, '\0'));
  EXPECT_EQ(read_npy(file).values, std::vector<float>{0.0F});
}

TEST(Npy, PythonReadsOursAndWeReadNumpys) {
  LABPOSE_REQUIRE_TORCH(python);
  const TempDir dir;
  write_npy({{2, 2}, {1.5F, -2.0F, 3.25F, 4.0F}}, dir / "ours.npy");
  const auto result = ::labpose::testing::run(
      ::labpose::testing::shell_quote(python) + " -c \"import numpy as n; a=n.load('" +
      (dir / "ours.npy").string() + "'); print(a.dtype, a.shape, a.tolist()); n.save('" +
      (dir / "theirs.npy").string() + "', n.arange(6, dtype=n.float64).reshape(1,2,3)); n.save('" +
      (dir / "bytes.npy").string() + "', n.array([0, 128, 255], dtype=n.uint8))\"");
  ASSERT_EQ(result.exit_code, 0) << result.output;
  EXPECT_NE(result.output.find("float32 (2, 2) [[1.5, -2.0], [3.25, 4.0]]"), std::string::npos)
      << result.output;
  const NpyArray theirs = read_npy(dir / "theirs.npy");
  EXPECT_EQ(theirs.shape, (std::vector<std::int64_t>{1, 2, 3}));
  EXPECT_EQ(theirs.values, (std::vector<float>{0, 1, 2, 3, 4, 5}));
  EXPECT_EQ(read_npy(dir / "bytes.npy").values, (std::vector<float>{0, 128, 255}));
}

}  // namespace
}  // namespace labpose::nets
