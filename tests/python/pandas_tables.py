"""pandas on the other side of labpose's table files (run with Debian's python3 + pandas + PyTables).

  pandas_tables.py to-csv FILE.h5 OUT.csv             read_hdf without a key (as DeepLabCut does), write to_csv
  pandas_tables.py from-csv FILE.csv OUT.h5 FORMAT N  read a DeepLabCut CSV with N index columns, to_hdf in
                                                      FORMAT (fixed or table) under df_with_missing
  pandas_tables.py describe FILE.h5                   print index/column structure
"""
import sys

import pandas as pd


def read_dlc_csv(path, index_columns):
    with open(path) as handle:
        header_rows = 0
        for line in handle:
            if line.split(",")[0] in ("scorer", "individuals", "bodyparts", "coords"):
                header_rows += 1
            else:
                break
    return pd.read_csv(path, header=list(range(header_rows)), index_col=list(range(index_columns)),
                       float_precision="round_trip")


def main():
    command = sys.argv[1]
    if command == "to-csv":
        pd.read_hdf(sys.argv[2]).to_csv(sys.argv[3])
    elif command == "from-csv":
        frame = read_dlc_csv(sys.argv[2], int(sys.argv[5]))
        frame.to_hdf(sys.argv[3], key="df_with_missing", mode="w", format=sys.argv[4])
    elif command == "describe":
        frame = pd.read_hdf(sys.argv[2], "df_with_missing")
        print("columns.names", list(frame.columns.names))
        print("index.nlevels", frame.index.nlevels)
        print("index.names", list(frame.index.names))
        print("index.dtype", frame.index.dtype if frame.index.nlevels == 1 else "multi")
        print("dtypes", sorted(set(str(d) for d in frame.dtypes)))
        print("shape", frame.shape)
    else:
        raise SystemExit(f"unknown command {command}")


if __name__ == "__main__":
    main()
