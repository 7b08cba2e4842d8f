"""DeepLabCut's side of labpose's analysis outputs (Debian's python3 + pandas + PyTables), read the
way DeepLabCut's tools and pandas users read them. Prints "ok ..." or fails.

  dlc_analysis_files.py H5 CSV META_PICKLE FRAMES SCORER
      pandas.read_hdf(H5) has one row per frame (index 0..FRAMES-1), columns (scorer, bodyparts,
      coords) with x, y, likelihood, float64, and equals pandas.read_csv(CSV, header=[0,1,2],
      index_col=0); the _meta.pickle loads with pickle.load and carries the keys DeepLabCut's
      create_labeled_video and extract_outlier_frames read
"""
import pickle
import sys

import numpy as np
import pandas as pd


def fail(message):
    print("FAIL: " + message)
    sys.exit(1)


def main():
    h5, csv, meta_pickle, frames, scorer = sys.argv[1:6]
    frames = int(frames)
    df = pd.read_hdf(h5)
    if list(df.index) != list(range(frames)):
        fail(f"index is not 0..{frames - 1}: {list(df.index)[:5]}...")
    if list(df.columns.names) != ["scorer", "bodyparts", "coords"]:
        fail(f"column levels {df.columns.names}")
    if set(df.columns.get_level_values(0)) != {scorer}:
        fail(f"scorer level {set(df.columns.get_level_values(0))}")
    if list(df.columns.get_level_values(2)[:3]) != ["x", "y", "likelihood"]:
        fail(f"coords {list(df.columns.get_level_values(2)[:3])}")
    if not all(dtype == np.float64 for dtype in df.dtypes):
        fail("values are not float64")
    from_csv = pd.read_csv(csv, header=[0, 1, 2], index_col=0, float_precision="round_trip")
    if list(from_csv.index) != list(df.index):
        fail("the CSV's rows differ from the .h5's")
    if not np.array_equal(from_csv.to_numpy(), df.to_numpy(), equal_nan=True):
        fail("the CSV's values differ from the .h5's")
    # DeepLabCut's way of reading the likelihoods of one bodypart.
    bodypart = df.columns.get_level_values(1)[0]
    likelihood = df.xs((bodypart, "likelihood"), level=(1, 2), axis=1)
    if likelihood.shape != (frames, 1):
        fail(f"xs(likelihood) has shape {likelihood.shape}")
    with open(meta_pickle, "rb") as f:
        meta = pickle.load(f)
    data = meta["data"]
    for key in ("start", "stop", "run_duration", "Scorer", "DLC-model-config file", "fps", "batch_size",
                "frame_dimensions", "nframes", "iteration (active-learning)", "training set fraction",
                "cropping", "cropping_parameters"):
        if key not in data:
            fail(f"_meta.pickle has no {key!r}")
    if data["nframes"] != frames or data["Scorer"] != scorer:
        fail(f"_meta.pickle says {data['nframes']} frames, scorer {data['Scorer']}")
    if len(data["cropping_parameters"]) != 4 or len(data["frame_dimensions"]) != 2:
        fail("cropping_parameters or frame_dimensions malformed")
    print(f"ok {frames} rows, {len(df.columns)} columns, meta keys {len(data)}")


if __name__ == "__main__":
    main()
