"""Writes PyTorch checkpoints for tests/nets/torch_checkpoint_test.cpp, and what torch.load returns
for each, into OUT_DIR: manifest.json lists every valid checkpoint (file, reference safetensors with
the float32 values of its state dict, names of its non-floating tensors, format) and the hostile
ones. Valid: torchvision resnet50 and mobilenet_v2 state dicts (random init) in the zip and legacy
formats, a timm-named MobileNetV2 under "state_dict" with optimizer state, "module."-prefixed
names, float16/bfloat16/float64 and integer tensors, parameters, views that share one storage,
pickle protocol 4 (frames, memoize, stack globals); and
a tar checkpoint of torch < 0.4, written byte for byte as torch.load still reads it.
Hostile: a pickle whose __reduce__ calls os.system, a whole pickled model, a big-endian byte order,
a corrupted entry (CRC), a tar archive that is no checkpoint, and hand-made pickles whose sizes, offsets and
strides lie. Usage: torch_checkpoints.py TOOLS_DIR OUT_DIR MARKER_FILE"""
import collections
import io
import json
import os
import pickle
import struct
import sys
import tarfile
import zipfile

import torch
import torchvision

sys.path.insert(0, sys.argv[1])
import torch_reference  # noqa: E402
import timm_names  # noqa: E402

out, marker = sys.argv[2], sys.argv[3]
torch.manual_seed(7)
manifest = {"valid": [], "hostile": []}


def state_dict_of(loaded):
    """What labpose reads: the dict under state_dict/model_state_dict/model, "module." removed."""
    for _ in range(3):
        inner = next((loaded[k] for k in ("state_dict", "model_state_dict", "model")
                      if isinstance(loaded.get(k), dict)), None)
        if inner is None:
            break
        loaded = inner
    state = {}
    for name, value in loaded.items():
        if torch.is_tensor(value):
            while name.startswith("module."):
                name = name[len("module."):]
            state[name] = value
    return state


def add_valid(name, obj, legacy, protocol=2):
    path = os.path.join(out, name + (".legacy.pth" if legacy else ".zip.pth"))
    torch.save(obj, path, _use_new_zipfile_serialization=not legacy, pickle_protocol=protocol)
    state = state_dict_of(torch.load(path))
    reference = os.path.join(out, os.path.basename(path) + ".reference.safetensors")
    torch_reference.write_safetensors({k: v.float() for k, v in state.items() if v.is_floating_point()},
                                      reference)
    manifest["valid"].append({"file": os.path.basename(path), "reference": os.path.basename(reference),
                              "skipped": sorted(k for k, v in state.items() if not v.is_floating_point()),
                              "format": "legacy" if legacy else "zip"})


resnet = torchvision.models.resnet50(weights=None)
mobile = torchvision.models.mobilenet_v2(weights=None)
small = torchvision.models.mobilenet_v2(weights=None, width_mult=0.35)
adam = torch.optim.Adam(small.parameters())
small(torch.randn(2, 3, 32, 32)).sum().backward()
adam.step()
base = torch.randn(6, 8)
mixed = {
    "half": torch.randn(3, 5).half(), "bfloat16": torch.randn(4, 2).bfloat16(), "double": torch.randn(7).double(),
    # float64 that rounds to float32's largest value, to subnormals and to zero
    "double_extremes": torch.tensor([3.4028235677973362e38, -3.40282350e38, 1e-40, -1e-45, 1e-50, -0.0],
                                    dtype=torch.float64),
    "int64": torch.arange(6).reshape(2, 3), "mask": torch.tensor([True, False]), "bytes": torch.arange(4).byte(),
    "parameter": torch.nn.Parameter(torch.randn(2, 3)), "scalar": torch.tensor(2.5), "empty": torch.empty(0, 5),
}
views = {
    "whole": base, "transposed": base.t(), "slice": base[1:5:2, 3:7], "row": base[2],
    "expanded": torch.randn(3, 1).expand(3, 4), "half_transposed": torch.randn(3, 4).half().t(),
}
for legacy in (False, True):
    add_valid("resnet50", resnet.state_dict(), legacy)
    add_valid("mobilenet_v2", mobile.state_dict(), legacy)
    add_valid("timm_mobilenetv2_035", {"epoch": 3, "arch": "mobilenetv2_035", "best_metric": 71.5,
                                       "state_dict": timm_names.mobilenet_v2_to_timm(small.state_dict()), "optimizer": adam.state_dict()}, legacy)
    add_valid("module_prefix", {"module." + k: v for k, v in small.state_dict().items()}, legacy)
    add_valid("dtypes", mixed, legacy)
    add_valid("views", views, legacy)
    add_valid("protocol4", {"mixed": mixed, "views": views, "state_dict": views}, legacy, protocol=4)


def add_hostile(name, data):
    with open(os.path.join(out, name), "wb") as handle:
        handle.write(data)
    manifest["hostile"].append(name)


class Evil:
    def __reduce__(self):
        return os.system, ("touch " + marker,)


for legacy in (False, True):
    buffer = io.BytesIO()
    torch.save({"weight": torch.ones(2), "payload": Evil()}, buffer, _use_new_zipfile_serialization=not legacy)
    add_hostile("os_system." + ("legacy" if legacy else "zip") + ".pth", buffer.getvalue())
buffer = io.BytesIO()
torch.save(torch.nn.Linear(2, 2), buffer)
add_hostile("whole_model.pth", buffer.getvalue())


def big_endian(data):
    """The zip checkpoint `data` with a byteorder entry saying "big" (as torch >= 2.1 writes one)."""
    source, target = zipfile.ZipFile(io.BytesIO(data)), io.BytesIO()
    with zipfile.ZipFile(target, "w", zipfile.ZIP_STORED) as archive:
        for info in source.infolist():
            archive.writestr(info.filename, source.read(info.filename))
        folder = source.infolist()[0].filename.split("/")[0]
        archive.writestr(folder + "/byteorder", "big")
    return target.getvalue()


buffer = io.BytesIO()
torch.save({"weight": torch.arange(8.0)}, buffer)
small_zip = buffer.getvalue()
add_hostile("big_endian.pth", big_endian(small_zip))
# A byte of the storage changed after the CRC was computed.
info = next(i for i in zipfile.ZipFile(io.BytesIO(small_zip)).infolist() if "/data/" in i.filename)
name_length, extra_length = struct.unpack_from("<HH", small_zip, info.header_offset + 26)  # local header
data_start = info.header_offset + 30 + name_length + extra_length
corrupted = bytearray(small_zip)
corrupted[data_start + 5] ^= 0x40
add_hostile("crc.pth", bytes(corrupted))

# A tar archive that is not a checkpoint.
buffer = io.BytesIO()
with tarfile.open(fileobj=buffer, mode="w") as archive:
    entry = tarfile.TarInfo("hello.txt")
    entry.size = 6
    archive.addfile(entry, io.BytesIO(b"hello\n"))
add_hostile("not_a_checkpoint.tar", buffer.getvalue())


class StorageView:
    """A tensor of the tar format that lies in a storage view (key, root, offset, size)."""
    def __init__(self, key, root, offset, size, shape, stride, storage_offset, dtype):
        self.key, self.root, self.offset, self.size = key, root, offset, size
        self.shape, self.stride, self.storage_offset, self.dtype = shape, stride, storage_offset, dtype


TENSOR_TYPES = {torch.float32: "FloatTensor", torch.float16: "HalfTensor", torch.float64: "DoubleTensor",
                torch.int64: "LongTensor", torch.uint8: "ByteTensor"}


def save_tar(obj, path, view_of=None):
    """torch.save of torch < 0.4, byte for byte as torch/serialization.py's legacy_load reads it: a
    tar (sys_info, pickle, tensors, storages) whose pickle names tensors by key."""
    tensors, storage_keys, storages = {}, {}, []
    stream = io.BytesIO()
    pickler = pickle.Pickler(stream, protocol=2)

    def persistent_id(value):
        if torch.is_tensor(value) or isinstance(value, StorageView):
            tensors[id(value)] = value
            return str(id(value))
        return None
    pickler.persistent_id = persistent_id
    pickler.dump(obj)
    records = io.BytesIO()
    pickle.dump(len(tensors), records, protocol=2)
    views = []
    for key, tensor in tensors.items():
        if isinstance(tensor, StorageView):
            root = storage_keys[tensors[tensor.root].storage().data_ptr()]
            views.append((tensor.key, root, tensor.offset, tensor.size))
            storage_key, shape, stride, offset, dtype = (tensor.key, tensor.shape, tensor.stride,
                                                         tensor.storage_offset, tensor.dtype)
        else:
            storage = tensor.storage()
            if storage.data_ptr() not in storage_keys:
                storage_keys[storage.data_ptr()] = 1000 + len(storages)
                storages.append((storage_keys[storage.data_ptr()], storage))
            storage_key, shape, stride, offset, dtype = (storage_keys[storage.data_ptr()], tensor.shape,
                                                         tensor.stride(), tensor.storage_offset(), tensor.dtype)
        pickle.dump((key, storage_key, getattr(torch, TENSOR_TYPES[dtype])), records, protocol=2)
        records.write(struct.pack("<i", len(shape)) + b"\0" * 4)
        records.write(struct.pack(f"<{len(shape)}q", *shape) + struct.pack(f"<{len(shape)}q", *stride))
        records.write(struct.pack("<q", offset))
    data = io.BytesIO()
    pickle.dump(len(storages), data, protocol=2)
    for key, storage in storages:
        pickle.dump((key, "cpu", getattr(torch, storage.pickle_storage_type())), data, protocol=2)
        whole = torch.tensor([], dtype=storage.dtype).set_(storage)
        data.write(struct.pack("<q", whole.numel()) + whole.numpy().tobytes())
    pickle.dump(views, data, protocol=2)
    sys_info = pickle.dumps({"protocol_version": 1001, "little_endian": True,
                             "type_sizes": {"short": 2, "int": 4, "long": 8}}, protocol=2)
    with tarfile.open(path, "w", format=tarfile.PAX_FORMAT) as archive:
        for name, content in (("sys_info", sys_info), ("pickle", stream.getvalue()),
                              ("tensors", records.getvalue()), ("storages", data.getvalue())):
            entry = tarfile.TarInfo(name)
            entry.size = len(content)
            archive.addfile(entry, io.BytesIO(content))


base = torch.randn(6, 8)
old = collections.OrderedDict([
    ("module.conv.weight", torch.randn(4, 3, 3, 3)), ("bn.running_mean", torch.randn(4)),
    ("bn.steps", torch.arange(3)), ("half", torch.randn(5).half()), ("double", torch.randn(3).double()),
    ("whole", base), ("transposed", base.t()), ("row", base[2]),
])
old["viewed"] = StorageView(999, id(base), 8, 16, (3,), (2,), 2, torch.float32)
tar_path = os.path.join(out, "old_format.tar.pth")
save_tar(old, tar_path)
loaded = torch.load(tar_path)
assert torch.equal(loaded["viewed"], base.flatten()[10:16:2]), "legacy_load reads the view elsewhere"
assert torch.equal(loaded["transposed"], base.t()) and loaded["row"].storage().data_ptr() == loaded["whole"].storage().data_ptr()
reference = tar_path + ".reference.safetensors"
state = state_dict_of(loaded)
torch_reference.write_safetensors({k: v.float() for k, v in state.items() if v.is_floating_point()}, reference)
manifest["valid"].append({"file": os.path.basename(tar_path), "reference": os.path.basename(reference),
                          "skipped": sorted(k for k, v in state.items() if not v.is_floating_point()),
                          "format": "tar"})


# Hand-made zip checkpoints whose pickles lie about storages and tensors.
class FakeStorage:
    def __init__(self, key, numel, data):
        self.key, self.numel, self.data = key, numel, data


class FakeTensor:
    def __init__(self, storage, offset, size, stride):
        self.args = (storage, offset, size, stride, False, collections.OrderedDict())

    def __reduce__(self):
        return torch._utils._rebuild_tensor_v2, self.args


def handmade(obj):
    stream, storages = io.BytesIO(), {}
    pickler = pickle.Pickler(stream, protocol=2)

    def persistent_id(value):
        if isinstance(value, FakeStorage):
            storages[value.key] = value.data
            return ("storage", torch.FloatStorage, value.key, "cpu", value.numel)
        return None
    pickler.persistent_id = persistent_id
    pickler.dump(obj)
    target = io.BytesIO()
    with zipfile.ZipFile(target, "w", zipfile.ZIP_STORED) as archive:
        archive.writestr("archive/data.pkl", stream.getvalue())
        for key, data in storages.items():
            archive.writestr("archive/data/" + key, data)
        archive.writestr("archive/version", "3\n")
    return target.getvalue()


four = struct.pack("<4f", 1, 2, 3, 4)
add_hostile("handmade_ok.pth", handmade({"w": FakeTensor(FakeStorage("0", 4, four), 1, (3,), (1,))}))
add_hostile("lying_offset.pth", handmade({"w": FakeTensor(FakeStorage("0", 4, four), 3, (4,), (1,))}))
add_hostile("lying_stride.pth", handmade({"w": FakeTensor(FakeStorage("0", 4, four), 0, (2, 2), (100, 1))}))
add_hostile("lying_storage_size.pth", handmade({"w": FakeTensor(FakeStorage("0", 1000, four), 0, (4,), (1,))}))
add_hostile("huge_storage.pth", handmade({"w": FakeTensor(FakeStorage("0", 1 << 61, four), 0, (4,), (1,))}))
add_hostile("huge_shape.pth", handmade({"w": FakeTensor(FakeStorage("0", 4, four), 0, (1 << 40, 1 << 40), (0, 0))}))
add_hostile("repeated_elements.pth", handmade({"w": FakeTensor(FakeStorage("0", 4, four), 0, (1 << 34,), (0,))}))
add_hostile("overflowing_stride.pth",
            handmade({"w": FakeTensor(FakeStorage("0", 4, four), 0, (3,), ((1 << 63) - 1,))}))
add_hostile("no_tensors.pth", handmade({"epoch": 3, "arch": "resnet50"}))
# Values that are not numbers once in float32: beyond its range, NaN.
buffer = io.BytesIO()
torch.save({"w": torch.tensor([1.0, 1e300, -1e300], dtype=torch.float64), "b": torch.tensor([float("nan")])}, buffer)
add_hostile("not_numbers.pth", buffer.getvalue())

# A zip with deflated entries, as wheels are, for the ZipArchive tests; the last entry holds 3 MiB
# in a few kilobytes of archive, so the reader grows its buffer as the bytes come.
with zipfile.ZipFile(os.path.join(out, "deflated.zip"), "w", zipfile.ZIP_DEFLATED) as archive:
    archive.writestr("package/__init__.py", "# empty\n" * 100)
    archive.writestr("package/models/weights.bin", bytes(range(256)) * 64)
    archive.writestr("package/models/repeated.bin", bytes(range(251)) * (3 * 1024 * 1024 // 251 + 1))

with open(os.path.join(out, "manifest.json"), "w") as handle:
    json.dump(manifest, handle, indent=1)
