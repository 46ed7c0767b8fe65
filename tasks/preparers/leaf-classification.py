# Splits Kaggle's raw leaf-classification train.csv as MLE-bench does: train_test_split with
# test_size=0.1 and random_state=0; answers one-hot over the sorted species names.
import sys
from pathlib import Path

import pandas as pd
from sklearn.model_selection import train_test_split

raw, public, private = (Path(p) for p in sys.argv[1:4])
old_train = pd.read_csv(raw / "train.csv")
for col in ("id", "species"):
    if col not in old_train.columns:
        sys.exit(f"train.csv has no '{col}' column: is {raw} the leaf-classification download?")
classes = sorted(old_train["species"].unique())
new_train, new_test = train_test_split(old_train, test_size=0.1, random_state=0)
new_test_without_labels = new_test.drop(columns=["species"])
answers = pd.DataFrame(0, index=new_test.index, columns=["id"] + classes)
answers["id"] = new_test["id"]
for i, row in new_test.iterrows():
    answers.loc[i, row["species"]] = 1
sample = answers.copy()
sample[classes] = 1 / len(classes)
new_train.to_csv(public / "train.csv", index=False)
answers.to_csv(private / "test.csv", index=False)
new_test_without_labels.to_csv(public / "test.csv", index=False)
sample.to_csv(public / "sample_submission.csv", index=False)
