"""pandas on refined tracks (labpose refine-tracks): the file reads as the stitched one did.

  refined_tracks.py REFINED.h5 ORIGINAL.h5 FIRST SECOND FROM TO

Both files read with pd.read_hdf under the key "tracks" and without a key, with the same columns,
index and dtypes; FIRST's columns of REFINED equal SECOND's of ORIGINAL (and the reverse) in rows
FROM..TO (both included) and every other value is ORIGINAL's. Prints "ok" and the shape.
"""
import sys

import numpy as np
import pandas as pd


def main():
    refined_path, original_path, first, second = sys.argv[1:5]
    start, end = int(sys.argv[5]), int(sys.argv[6])
    refined = pd.read_hdf(refined_path, "tracks")
    original = pd.read_hdf(original_path, "tracks")
    assert pd.read_hdf(refined_path).equals(refined), "read without a key differs"
    assert list(refined.columns.names) == ["scorer", "individuals", "bodyparts", "coords"]
    assert refined.columns.equals(original.columns), "the columns changed"
    assert refined.index.equals(original.index), "the index changed"
    assert (refined.dtypes == original.dtypes).all(), "the dtypes changed"
    expected = original.copy()
    rows = (expected.index >= start) & (expected.index <= end)
    scorer = original.columns.get_level_values("scorer")[0]
    for a, b in ((first, second), (second, first)):
        expected.loc[rows, (scorer, a)] = original.loc[rows, (scorer, b)].to_numpy()
    np.testing.assert_array_equal(refined.to_numpy(), expected.to_numpy())
    print("ok", refined.shape)


if __name__ == "__main__":
    main()
