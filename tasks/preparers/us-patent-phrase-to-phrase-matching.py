# Splits Kaggle's raw us-patent-phrase-to-phrase-matching train.csv as MLE-bench does:
# train_test_split with test_size=0.1 and random_state=0. The private answers are the whole new
# test rows (id, anchor, target, context, score); the public test drops score; the sample
# submission is id with score 0.
import sys
from pathlib import Path

import pandas as pd
from sklearn.model_selection import train_test_split

raw, public, private = (Path(p) for p in sys.argv[1:4])
ID, TARGET = "id", "score"
COLUMNS = [ID, "anchor", "target", "context", TARGET]

path = raw / "train.csv"
if not path.is_file():
    sys.exit(f"raw file train.csv is missing from {raw}: download the competition's files from Kaggle")
try:
    # MLE-bench runs pandas >= 2.2, whose default missing-value strings include "None".
    old_train = pd.read_csv(path, float_precision="round_trip", na_values=["None"])
except Exception as e:  # pandas raises several parser errors
    sys.exit(f"raw file train.csv is not a readable CSV: {e}")
lacking = [c for c in COLUMNS if c not in old_train.columns]
if lacking:
    sys.exit(f"raw file train.csv has no {lacking} column (it has {list(old_train.columns)[:6]}, expected {COLUMNS}): is {raw} the us-patent-phrase-to-phrase-matching download?")
if len(old_train) < 2:
    sys.exit(f"raw file train.csv has {len(old_train)} rows: too few to split")
if old_train[ID].duplicated().any():
    sys.exit(f"raw file train.csv has duplicate ids, e.g. {old_train[ID][old_train[ID].duplicated()].iloc[0]!r}")

new_train, new_test = train_test_split(old_train, test_size=0.1, random_state=0)
sample = new_test[[ID, TARGET]].copy()
sample[TARGET] = 0

new_train.to_csv(public / "train.csv", index=False)
new_test.to_csv(private / "test.csv", index=False)
new_test.drop(columns=[TARGET]).to_csv(public / "test.csv", index=False)
sample.to_csv(public / "sample_submission.csv", index=False)
