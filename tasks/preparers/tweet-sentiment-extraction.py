# Splits Kaggle's raw tweet-sentiment-extraction train.csv as MLE-bench does: train_test_split with
# test_size=0.1 and random_state=0. The private answers are the whole new test rows (textID, text,
# selected_text, sentiment); the public test drops selected_text; the sample submission is textID
# with an empty selected_text. Kaggle's one tweet with no text stays an empty field.
import sys
from pathlib import Path

import pandas as pd
from sklearn.model_selection import train_test_split

raw, public, private = (Path(p) for p in sys.argv[1:4])
ID, TARGET = "textID", "selected_text"
COLUMNS = [ID, "text", TARGET, "sentiment"]

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
    sys.exit(f"raw file train.csv has no {lacking} column (it has {list(old_train.columns)[:6]}, expected {COLUMNS}): is {raw} the tweet-sentiment-extraction download?")
if len(old_train) < 2:
    sys.exit(f"raw file train.csv has {len(old_train)} rows: too few to split")
if old_train[ID].duplicated().any():
    sys.exit(f"raw file train.csv has duplicate {ID}s, e.g. {old_train[ID][old_train[ID].duplicated()].iloc[0]!r}")

new_train, new_test = train_test_split(old_train, test_size=0.1, random_state=0)
sample = new_test[[ID, TARGET]].copy()
sample[TARGET] = ""

new_train.to_csv(public / "train.csv", index=False)
new_test.to_csv(private / "test.csv", index=False)
new_test.drop(columns=[TARGET]).to_csv(public / "test.csv", index=False)
sample.to_csv(public / "sample_submission.csv", index=False)
