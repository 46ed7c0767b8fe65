# Splits Kaggle's raw tabular-playground-series-dec-2021 train.csv as MLE-bench does:
# train_test_split with test_size=0.1 and random_state=0. The private answers are the whole new
# test rows (features and Cover_Type); the public test drops Cover_Type; the sample submission
# predicts Cover_Type 2 for every Id.
import sys
from pathlib import Path

import pandas as pd
from sklearn.model_selection import train_test_split

raw, public, private = (Path(p) for p in sys.argv[1:4])
ID, TARGET = "Id", "Cover_Type"

path = raw / "train.csv"
if not path.is_file():
    sys.exit(f"raw file train.csv is missing from {raw}: download the competition's files from Kaggle")
try:
    # MLE-bench runs pandas >= 2.2, whose default missing-value strings include "None".
    old_train = pd.read_csv(path, float_precision="round_trip", na_values=["None"])
except Exception as e:  # pandas raises several parser errors
    sys.exit(f"raw file train.csv is not a readable CSV: {e}")
for col in (ID, TARGET):
    if col not in old_train.columns:
        sys.exit(f"raw file train.csv has no '{col}' column (it has {list(old_train.columns)[:6]}): is {raw} the tabular-playground-series-dec-2021 download?")
if len(old_train) < 2:
    sys.exit(f"raw file train.csv has {len(old_train)} rows: too few to split")
if old_train[ID].duplicated().any():
    sys.exit(f"raw file train.csv has duplicate Ids, e.g. {old_train[ID][old_train[ID].duplicated()].iloc[0]!r}")

new_train, new_test = train_test_split(old_train, test_size=0.1, random_state=0)
sample = pd.DataFrame({ID: new_test[ID].values, TARGET: 2})

new_train.to_csv(public / "train.csv", index=False)
new_test.to_csv(private / "test.csv", index=False)
new_test.drop(columns=[TARGET]).to_csv(public / "test.csv", index=False)
sample.to_csv(public / "sample_submission.csv", index=False)
