# Helpers shared by the preparers. Prepare (prepare.go) runs `python3 -c <common.py + preparer>
# RAW PUBLIC PRIVATE`: this source comes first, so every preparer can call these functions (and
# use sys, Path and pd) without importing them. Each helper exits with a message naming the raw
# file and what is wrong with it, which Prepare shows to the user. Not a task's preparer itself.
import sys
from pathlib import Path

import pandas as pd
from sklearn.model_selection import train_test_split

DOWNLOAD = "download the competition's files from Kaggle"


def args():
    """The raw, public and private folders Prepare passes, as Paths."""
    if len(sys.argv) != 4:
        sys.exit("usage: python3 -c <common.py and a preparer> RAW PUBLIC PRIVATE")
    return tuple(Path(p) for p in sys.argv[1:4])


def raw_file(raw, name, advice=DOWNLOAD):
    """The path of raw file `name` in folder `raw`; exits naming it (and `advice`) when missing."""
    path = raw / name
    if not path.is_file():
        sys.exit(f"raw file {name} is missing from {raw}: {advice}")
    return path


def require_columns(df, name, columns, task, raw, exact=False):
    """Exits unless raw file `name` (read as df) has `columns`: among others when exact is False,
    exactly these in this order when True, exactly these in any order when "any order"."""
    have = list(df.columns)
    if exact:
        same = have == list(columns) if exact is True else set(have) == set(columns)
        if not same:
            sys.exit(f"raw file {name} has columns {have[:6]}, expected {columns}: is {raw} the {task} download?")
        return
    lacking = [c for c in columns if c not in have]
    if lacking:
        nor = f" (nor {', '.join(map(repr, lacking[1:]))})" if len(lacking) > 1 else ""
        sys.exit(f"raw file {name} has no {lacking[0]!r} column{nor}; it has {have[:9]}: is {raw} the {task} download?")


def require_rows(df, name, at_least=2):
    """Exits unless raw file `name` has at least `at_least` rows (two are the fewest to split)."""
    if len(df) < at_least:
        sys.exit(f"raw file {name} has {len(df)} rows: too few to split")


def require_unique(df, column, name):
    """Exits when `column` of raw file `name` repeats a value, showing one."""
    repeated = df[column].duplicated()
    if repeated.any():
        sys.exit(f"raw file {name} has duplicate {column}s, e.g. {df[column][repeated].iloc[0]!r}")


def read_raw_csv(raw, name, columns, task, *, source=None, exact=False, min_rows=2, unique=None, **read_kwargs):
    """Reads raw CSV `name` from folder `raw` (or from `source`, a path or file object, when the
    file is found elsewhere) and checks it: the columns (see require_columns), at least min_rows
    rows, and no repeated value in column `unique` when given. `task` names the competition in
    the messages. By default the numbers are read with float_precision="round_trip" and a bare
    None is missing, as MLE-bench's pandas (>= 2.2, whose default missing-value strings include
    "None") reads it; pass na_values=None or float_precision=None to read otherwise."""
    if source is None:
        source = raw_file(raw, name)
    read_kwargs = {"float_precision": "round_trip", "na_values": ["None"], **read_kwargs}
    try:
        df = pd.read_csv(source, **read_kwargs)
    except Exception as e:  # pandas raises several parser errors
        sys.exit(f"raw file {name} is not a readable CSV: {e}")
    require_columns(df, name, columns, task, raw, exact)
    require_rows(df, name, min_rows)
    if unique is not None:
        require_unique(df, unique, name)
    return df


def split(rows, test_size):
    """MLE-bench's split: train_test_split(rows, test_size=test_size, random_state=0)."""
    return train_test_split(rows, test_size=test_size, random_state=0)


def constant_sample(test, id_column, values):
    """A sample submission: the id column of `test` and, after it, each column of `values` (a dict)
    holding its constant."""
    sample = test[[id_column]].copy()
    for column, value in values.items():
        sample[column] = value
    return sample


def write_prepared(public, private, *, train, test, sample, answers, answers_name="test.csv"):
    """Writes MLE-bench's four prepared CSVs without the index: public/train.csv, public/test.csv,
    public/sample_submission.csv and private/<answers_name>."""
    train.to_csv(public / "train.csv", index=False)
    test.to_csv(public / "test.csv", index=False)
    sample.to_csv(public / "sample_submission.csv", index=False)
    answers.to_csv(private / answers_name, index=False)
