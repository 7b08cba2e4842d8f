"""DeepLabCut's side of labpose's machinelabels files (Debian's python3 + pandas + PyTables), read
as extract_outlier_frames and the refinement tools read them. Prints "ok ..." or fails.

  dlc_machine_labels.py H5 CSV TRACKS_H5
      pandas.read_hdf(H5, "df_with_missing") has 3-level rows ("labeled-data", stem, imgNNN.png) and
      the columns of the tracks; each row equals the tracks' row of that frame; pandas.read_csv(CSV,
      header=[0,1,2], index_col=[0,1,2]) is the same table
"""
import sys

import numpy as np
import pandas as pd


def fail(message):
    print("FAIL: " + message)
    sys.exit(1)


def main():
    h5, csv, tracks_h5 = sys.argv[1:4]
    machine = pd.read_hdf(h5, "df_with_missing")
    tracks = pd.read_hdf(tracks_h5)
    if machine.index.nlevels != 3 or set(machine.index.get_level_values(0)) != {"labeled-data"}:
        fail(f"rows are not (labeled-data, stem, image): {list(machine.index)[:3]}")
    if list(machine.columns) != list(tracks.columns):
        fail("columns differ from the tracks'")
    for key in machine.index:
        frame = int(key[2][3:-4])
        if not np.array_equal(machine.loc[key].values, tracks.loc[frame].values):
            fail(f"row {key} is not frame {frame} of the tracks")
    from_csv = pd.read_csv(csv, header=[0, 1, 2], index_col=[0, 1, 2], float_precision="round_trip")
    if list(from_csv.index) != list(machine.index):
        fail("the CSV's rows differ from the .h5's")
    if not np.array_equal(from_csv.to_numpy(), machine.to_numpy(), equal_nan=True):
        fail("the CSV's values differ from the .h5's")
    print(f"ok {len(machine)} rows")


if __name__ == "__main__":
    main()
