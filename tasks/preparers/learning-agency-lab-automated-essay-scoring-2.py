# Splits Kaggle's raw learning-agency-lab-automated-essay-scoring-2 train.csv as MLE-bench does:
# train_test_split with test_size=0.1 and random_state=0. The private answers (answers.csv) are
# the whole new test rows (essay_id, full_text, score); the public test drops score; the sample
# submission scores each essay with numpy's RandomState(42).randint(1, 7).
import sys
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.model_selection import train_test_split

raw, public, private = (Path(p) for p in sys.argv[1:4])
ID, TARGET = "essay_id", "score"
COLUMNS = [ID, "full_text", TARGET]

path = raw / "train.csv"
if not path.is_file():
    sys.exit(f"raw file train.csv is missing from {raw}: download the competition's files from Kaggle")
try:
    # MLE-bench runs pandas >= 2.2, whose default missing-value strings include "None".
    old_train = pd.read_csv(path, float_precision="round_trip", na_values=["None"])
except Exception as e:  # pandas raises several parser errors
    sys.exit(f"raw file train.csv is not a readable CSV: {e}")
if list(old_train.columns) != COLUMNS:
    sys.exit(f"raw file train.csv has columns {list(old_train.columns)[:6]}, expected {COLUMNS}: is {raw} the learning-agency-lab-automated-essay-scoring-2 download?")
if len(old_train) < 2:
    sys.exit(f"raw file train.csv has {len(old_train)} rows: too few to split")
if old_train[ID].duplicated().any():
    sys.exit(f"raw file train.csv has duplicate essay ids, e.g. {old_train[ID][old_train[ID].duplicated()].iloc[0]!r}")

new_train, answers = train_test_split(old_train, test_size=0.1, random_state=0)
new_test = answers.drop(columns=[TARGET])
sample = answers[[ID]].copy()
sample[TARGET] = np.random.RandomState(42).randint(1, 7, size=len(sample))

answers.to_csv(private / "answers.csv", index=False)
new_train.to_csv(public / "train.csv", index=False)
new_test.to_csv(public / "test.csv", index=False)
sample.to_csv(public / "sample_submission.csv", index=False)
