# Splits Kaggle's raw tabular-playground-series-may-2022 train.csv as MLE-bench does:
# train_test_split with test_size=100_000 rows (an integer, not a share) and random_state=0, then
# ids renumbered in split order: 0 .. len(train)-1 in the new train, continuing in the new test.
# The private test holds the whole new test rows, private/gold_submission.csv its id and target;
# the public test drops target; the sample submission predicts 0.5.
# Kaggle's train has 900,000 rows, so the test share is 1/9. A smaller train (MLE-bench would fail
# on one of 100,000 rows or fewer) keeps that share: ceil(rows / 9) test rows. For the same count
# scikit-learn splits identically whether it is given as rows or as a share.
# Runs after common.py (args, read_raw_csv, split, constant_sample, write_prepared).
import math

import numpy as np

raw, public, private = args()
ID, TARGET = "id", "target"
TEST_ROWS = 100_000

# The ids are renumbered, so repeated raw ids do not matter.
old_train = read_raw_csv(raw, "train.csv", [ID, TARGET], "tabular-playground-series-may-2022")
n_test = TEST_ROWS if len(old_train) > TEST_ROWS else math.ceil(len(old_train) / 9)
new_train, new_test = split(old_train, n_test)
new_train, new_test = new_train.copy(), new_test.copy()
new_train[ID] = np.arange(len(new_train))
new_test[ID] = np.arange(len(new_train), len(new_train) + len(new_test))

new_test[[ID, TARGET]].to_csv(private / "gold_submission.csv", index=False)
write_prepared(public, private, train=new_train, test=new_test.drop(columns=[TARGET]),
               sample=constant_sample(new_test, ID, {TARGET: 0.5}), answers=new_test)
