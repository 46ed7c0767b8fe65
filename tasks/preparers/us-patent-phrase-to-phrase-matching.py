# Splits Kaggle's raw us-patent-phrase-to-phrase-matching train.csv as MLE-bench does:
# train_test_split with test_size=0.1 and random_state=0. The private answers are the whole new
# test rows (id, anchor, target, context, score); the public test drops score; the sample
# submission is id with score 0.
# Runs after common.py (args, read_raw_csv, split, constant_sample, write_prepared).

raw, public, private = args()
ID, TARGET = "id", "score"
COLUMNS = [ID, "anchor", "target", "context", TARGET]

old_train = read_raw_csv(raw, "train.csv", COLUMNS, "us-patent-phrase-to-phrase-matching", unique=ID)
new_train, new_test = split(old_train, 0.1)
write_prepared(public, private, train=new_train, test=new_test.drop(columns=[TARGET]),
               sample=constant_sample(new_test, ID, {TARGET: 0}), answers=new_test)
