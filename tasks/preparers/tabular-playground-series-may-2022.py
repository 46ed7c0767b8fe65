# Splits Kaggle's raw tabular-playground-series-may-2022 train.csv as MLE-bench does:
# train_test_split with test_size=100_000 rows (an integer, not a share) and random_state=0, then
# ids renumbered in split order: 0 .. len(train)-1 in the new train, continuing in the new test.
# The private test holds the whole new test rows, private/gold_submission.csv its id and target;
# the public test drops target; the sample submission predicts 0.5.
# Kaggle's train has 900,000 rows, so the test share is 1/9. A smaller train (MLE-bench would fail
# on one of 100,000 rows or fewer) keeps that share: ceil(rows / 9) test rows. For the same count
# scikit-learn splits identically whether it is given as rows or as a share.
import math
import sys
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.model_selection import train_test_split

raw, public, private = (Path(p) for p in sys.argv[1:4])
ID, TARGET = "id", "target"
TEST_ROWS = 100_000

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
        sys.exit(f"raw file train.csv has no '{col}' column (it has {list(old_train.columns)[:6]}): is {raw} the tabular-playground-series-may-2022 download?")
if len(old_train) < 2:
    sys.exit(f"raw file train.csv has {len(old_train)} rows: too few to split")

n_test = TEST_ROWS if len(old_train) > TEST_ROWS else math.ceil(len(old_train) / 9)
new_train, new_test = train_test_split(old_train, test_size=n_test, random_state=0)
new_train, new_test = new_train.copy(), new_test.copy()
new_train[ID] = np.arange(len(new_train))
new_test[ID] = np.arange(len(new_train), len(new_train) + len(new_test))

gold = new_test[[ID, TARGET]].copy()
sample = gold.copy()
sample[TARGET] = 0.5

new_train.to_csv(public / "train.csv", index=False)
new_test.to_csv(private / "test.csv", index=False)
new_test.drop(columns=[TARGET]).to_csv(public / "test.csv", index=False)
gold.to_csv(private / "gold_submission.csv", index=False)
sample.to_csv(public / "sample_submission.csv", index=False)
