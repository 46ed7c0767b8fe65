# Splits Kaggle's raw tabular-playground-series-dec-2021 train.csv as MLE-bench does:
# train_test_split with test_size=0.1 and random_state=0. The private answers are the whole new
# test rows (features and Cover_Type); the public test drops Cover_Type; the sample submission
# predicts Cover_Type 2 for every Id.
# Runs after common.py (args, read_raw_csv, split, constant_sample, write_prepared).

raw, public, private = args()
ID, TARGET = "Id", "Cover_Type"

old_train = read_raw_csv(raw, "train.csv", [ID, TARGET], "tabular-playground-series-dec-2021", unique=ID)
new_train, new_test = split(old_train, 0.1)
write_prepared(public, private, train=new_train, test=new_test.drop(columns=[TARGET]),
               sample=constant_sample(new_test, ID, {TARGET: 2}), answers=new_test)
