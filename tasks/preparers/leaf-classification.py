# Splits Kaggle's raw leaf-classification train.csv as MLE-bench does: train_test_split with
# test_size=0.1 and random_state=0; answers one-hot over the sorted species names.
# Runs after common.py (args, read_raw_csv, split, write_prepared).

raw, public, private = args()
# Read with pandas' default float parser, as MLE-bench reads it.
old_train = read_raw_csv(raw, "train.csv", ["id", "species"], "leaf-classification", unique="id",
                         float_precision=None, na_values=None)
classes = sorted(old_train["species"].unique())
new_train, new_test = split(old_train, 0.1)
new_test_without_labels = new_test.drop(columns=["species"])
answers = pd.DataFrame(0, index=new_test.index, columns=["id"] + classes)
answers["id"] = new_test["id"]
for i, row in new_test.iterrows():
    answers.loc[i, row["species"]] = 1
sample = answers.copy()
sample[classes] = 1 / len(classes)
write_prepared(public, private, train=new_train, test=new_test_without_labels, sample=sample, answers=answers)
