"""DeepLabCut's side of labpose's multi-animal analysis files (Debian's python3 + numpy + pandas +
PyTables), read the way DeepLabCut's own readers read them. Prints "ok ..." or fails.

  dlc_multi_animal_files.py --full F --assemblies A [--tracklets T --h5 H [--csv C]]
                            --frames N --scorer S --individuals a,b --multi p,q,r [--unique u,v]
                            [--expect INDIVIDUAL,BODYPART,FRAME,X,Y ...] [--identity]
      F (_full.pickle): "metadata" with DeepLabCut's keys and "frameNNN" entries (coordinates,
      confidence, costs of the PAFinds edges) whose shapes agree; A (_assemblies.pickle): frame
      index -> (animals, multi bodyparts, 4) arrays, "single" with unique bodyparts; T (_el.pickle):
      "header" MultiIndex and tracklets of "frameNNN" -> (multi bodyparts, 4) arrays; H (_el.h5):
      pandas.read_hdf gives frames 0..N-1 and columns (scorer, individuals, bodyparts, coords), each
      individual once with every bodypart's x, y, likelihood; C is what pandas.to_csv writes of H
      (or equal to it as pandas.read_csv reads it).
      --identity: a network with an identity head. Each F entry then has "identity", per bodypart
      an (n, individuals) float32 array of probabilities, and the 4th column of A is, at every
      keypoint, the individual its candidate's probabilities favour (DeepLabCut's argmax).
      Without it, F has no "identity" and the 4th column of A is -1.
"""
import argparse
import math
import pickle
import re
import sys

import numpy as np
import pandas as pd


def fail(message):
    print("FAIL: " + message)
    sys.exit(1)


def names(text):
    return [name for name in text.split(",") if name]


def check_identity(key, entry, counts, individuals, favoured):
    identity = entry["identity"]
    if len(identity) != len(counts):
        fail(f"{key}: {len(identity)} identity arrays for {len(counts)} bodyparts")
    for j, (ids, xy) in enumerate(zip(identity, entry["coordinates"][0])):
        if ids.dtype != np.float32 or ids.shape != (counts[j], individuals):
            fail(f"{key}: identity {ids.dtype} {ids.shape}, expected ({counts[j]}, {individuals})")
        if ids.size and not ((ids > 0) & (ids < 1)).all():
            fail(f"{key}: identity values of bodypart {j} are not sigmoids in (0, 1): {ids}")
        for position, row in zip(xy, ids):
            favoured[(int(key[5:]), j, float(position[0]), float(position[1]))] = int(row.argmax())


def check_full(path, frames, bodyparts, individuals, favoured):
    with open(path, "rb") as f:
        data = pickle.load(f)
    meta = data["metadata"]
    for key in ("nms radius", "minimal confidence", "sigma", "PAFgraph", "PAFinds", "all_joints",
                "all_joints_names", "nframes", "key_str_width"):
        if key not in meta:
            fail(f"_full.pickle metadata has no {key!r}")
    if meta["nframes"] != frames or list(meta["all_joints_names"]) != bodyparts:
        fail(f"_full.pickle metadata: {meta['nframes']} frames, {meta['all_joints_names']}")
    width = int(np.ceil(np.log10(frames))) if frames > 1 else 0
    if meta["key_str_width"] != width:
        fail(f"key_str_width {meta['key_str_width']}, expected {width}")
    graph = meta["PAFgraph"]
    keys = [key for key in data if key != "metadata"]
    for key in keys:
        if not re.fullmatch(r"frame\d{%d}" % width, key) or int(key[5:]) >= frames:
            fail(f"_full.pickle key {key!r}")
        entry = data[key]
        coordinates, confidence = entry["coordinates"][0], entry["confidence"]
        if len(coordinates) != len(bodyparts) or len(confidence) != len(bodyparts):
            fail(f"{key}: {len(coordinates)} coordinate arrays for {len(bodyparts)} bodyparts")
        counts = []
        for xy, p in zip(coordinates, confidence):
            if xy.dtype != np.float64 or xy.ndim != 2 or xy.shape[1] != 2:
                fail(f"{key}: coordinates {xy.dtype} {xy.shape}")
            if p.dtype != np.float32 or p.shape != (xy.shape[0], 1):
                fail(f"{key}: confidence {p.dtype} {p.shape} for {xy.shape[0]} candidates")
            counts.append(xy.shape[0])
        if favoured is None and "identity" in entry:
            fail(f"{key}: an 'identity' without an identity head")
        if favoured is not None:
            check_identity(key, entry, counts, individuals, favoured)
        if sorted(entry["costs"]) != sorted(meta["PAFinds"]):
            fail(f"{key}: costs of edges {sorted(entry['costs'])}, PAFinds {meta['PAFinds']}")
        for edge, costs in entry["costs"].items():
            s, t = graph[edge]
            shape = (counts[s], counts[t]) if counts[s] and counts[t] else (0, 0)
            for name in ("m1", "distance"):
                if costs[name].dtype != np.float32 or costs[name].shape != shape:
                    fail(f"{key}: edge {edge} {name} {costs[name].shape}, expected {shape}")
    return len(keys)


def check_identity_column(key, value, favoured):
    for animal in value:
        for j, (x, y, _, group) in enumerate(animal):
            if np.isnan(x):
                continue
            expected = -1 if favoured is None else favoured.get((key, j, float(x), float(y)))
            if group != expected:
                fail(f"_assemblies.pickle[{key}] bodypart {j} at ({x}, {y}): identity {group}, "
                     f"expected {expected}")


def check_assemblies(path, frames, individuals, multi, unique, favoured):
    with open(path, "rb") as f:
        data = pickle.load(f)
    animals = 0
    for key, value in data.items():
        if key == "single":
            for frame, array in value.items():
                if not 0 <= frame < frames or array.shape != (len(unique), 3):
                    fail(f"_assemblies.pickle single[{frame}] {array.shape}")
            continue
        if not isinstance(key, int) or not 0 <= key < frames:
            fail(f"_assemblies.pickle key {key!r}")
        if value.dtype != np.float64 or value.ndim != 3 or value.shape[1:] != (len(multi), 4):
            fail(f"_assemblies.pickle[{key}] {value.dtype} {value.shape}")
        if value.shape[0] > len(individuals):
            fail(f"_assemblies.pickle[{key}] has {value.shape[0]} animals")
        check_identity_column(key, value, favoured)
        animals += value.shape[0]
    if unique and "single" not in data and animals:
        fail("_assemblies.pickle has no 'single' entry")
    return animals


def check_tracklets(path, frames, scorer, multi):
    with open(path, "rb") as f:
        data = pickle.load(f)
    header = data.pop("header")
    if not isinstance(header, pd.MultiIndex) or list(header.names) != ["scorer", "bodyparts",
                                                                       "coords"]:
        fail(f"_el.pickle header {header!r}")
    if list(header.get_level_values("bodyparts").unique()) != multi or \
            set(header.get_level_values("scorer")) != {scorer}:
        fail(f"_el.pickle header levels {header}")
    data.pop("single", None)
    for tracklet, entries in data.items():
        for key, array in entries.items():
            # DeepLabCut's TrackletStitcher reads the frame number from the key's digits.
            frame = int(re.findall(r"\d+", key)[0])
            if not 0 <= frame < frames or array.shape != (len(multi), 4):
                fail(f"tracklet {tracklet} {key}: {array.shape}")
    return len(data)


def check_tracks(h5, csv, frames, scorer, individuals, multi, unique, expect):
    df = pd.read_hdf(h5)
    if not df.equals(pd.read_hdf(h5, "tracks")):
        fail("read_hdf without and with key='tracks' differ")
    if list(df.index) != list(range(frames)):
        fail(f"index is not 0..{frames - 1}")
    if list(df.columns.names) != ["scorer", "individuals", "bodyparts", "coords"]:
        fail(f"column levels {df.columns.names}")
    expected = [(scorer, i, b, c) for i in individuals for b in multi
                for c in ("x", "y", "likelihood")]
    expected += [(scorer, "single", b, c) for b in unique for c in ("x", "y", "likelihood")]
    if list(df.columns) != expected:
        fail(f"columns {list(df.columns)[:6]}...")
    if not all(dtype == np.float64 for dtype in df.dtypes):
        fail("values are not float64")
    # DeepLabCut's way of taking one animal: one individual per track.
    for individual in individuals:
        if df.xs(individual, level="individuals", axis=1).shape != (frames, 3 * len(multi)):
            fail(f"xs({individual}) shape")
    # pandas reads a first row of NaN as the index's name: compare with pandas' own CSV first.
    if csv and open(csv).read() != df.to_csv():
        from_csv = pd.read_csv(csv, header=[0, 1, 2, 3], index_col=0,
                               float_precision="round_trip")
        if not np.array_equal(from_csv.to_numpy(), df.to_numpy(), equal_nan=True):
            fail("the CSV's values differ from the .h5's")
    for item in expect:
        individual, bodypart, frame, x, y = item.split(",")
        got = df.loc[int(frame), (scorer, individual, bodypart)]
        if not (math.isclose(got["x"], float(x)) and math.isclose(got["y"], float(y))):
            fail(f"{individual} {bodypart} at frame {frame}: {got['x']}, {got['y']}")
    return int(df.notna().any(axis=1).sum())


def main():
    parser = argparse.ArgumentParser()
    for option in ("--full", "--assemblies", "--tracklets", "--h5", "--csv", "--scorer",
                   "--individuals", "--multi"):
        parser.add_argument(option)
    parser.add_argument("--unique", default="")
    parser.add_argument("--frames", type=int)
    parser.add_argument("--expect", action="append", default=[])
    parser.add_argument("--identity", action="store_true")
    args = parser.parse_args()
    individuals, multi, unique = names(args.individuals), names(args.multi), names(args.unique)
    favoured = {} if args.identity else None  # (frame, bodypart, x, y) -> favoured individual
    entries = check_full(args.full, args.frames, multi + unique, len(individuals), favoured)
    animals = check_assemblies(args.assemblies, args.frames, individuals, multi, unique, favoured)
    summary = f"ok {entries} frame entries, {animals} animals"
    if args.tracklets:
        tracklets = check_tracklets(args.tracklets, args.frames, args.scorer, multi)
        rows = check_tracks(args.h5, args.csv, args.frames, args.scorer, individuals, multi,
                            unique, args.expect)
        summary += f", {tracklets} tracklets, {rows} rows with tracks"
    if args.identity:
        summary += f", identities of {len(favoured)} candidates"
    print(summary)


if __name__ == "__main__":
    main()
