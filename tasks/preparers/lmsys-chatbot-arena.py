# Splits Kaggle's raw lmsys-chatbot-arena train.csv as MLE-bench does: train_test_split with
# test_size=0.1 and random_state=0. The private answers (answers.csv) are the whole new test rows
# (with the model names and the three winner columns); the public test keeps id, prompt,
# response_a and response_b; the sample submission gives each outcome 1/3.
import sys
from pathlib import Path

import pandas as pd
from sklearn.model_selection import train_test_split

raw, public, private = (Path(p) for p in sys.argv[1:4])
ID = "id"
TEST_COLUMNS = [ID, "prompt", "response_a", "response_b"]
TARGETS = ["winner_model_a", "winner_model_b", "winner_tie"]

path = raw / "train.csv"
if not path.is_file():
    sys.exit(f"raw file train.csv is missing from {raw}: download the competition's files from Kaggle")
try:
    # MLE-bench runs pandas >= 2.2, whose default missing-value strings include "None".
    old_train = pd.read_csv(path, float_precision="round_trip", na_values=["None"])
except Exception as e:  # pandas raises several parser errors
    sys.exit(f"raw file train.csv is not a readable CSV: {e}")
lacking = [c for c in TEST_COLUMNS + TARGETS if c not in old_train.columns]
if lacking:
    sys.exit(f"raw file train.csv has no {lacking} column (it has {list(old_train.columns)[:9]}): is {raw} the lmsys-chatbot-arena download?")
if len(old_train) < 2:
    sys.exit(f"raw file train.csv has {len(old_train)} rows: too few to split")
if old_train[ID].duplicated().any():
    sys.exit(f"raw file train.csv has duplicate ids, e.g. {old_train[ID][old_train[ID].duplicated()].iloc[0]!r}")

new_train, answers = train_test_split(old_train, test_size=0.1, random_state=0)
new_test = answers[TEST_COLUMNS].copy()
sample = answers[[ID]].copy()
for c in TARGETS:
    sample[c] = 0.3333333333333333

answers.to_csv(private / "answers.csv", index=False)
new_train.to_csv(public / "train.csv", index=False)
new_test.to_csv(public / "test.csv", index=False)
sample.to_csv(public / "sample_submission.csv", index=False)
