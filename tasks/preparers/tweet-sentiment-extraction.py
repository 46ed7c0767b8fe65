# Splits Kaggle's raw tweet-sentiment-extraction train.csv as MLE-bench does: train_test_split with
# test_size=0.1 and random_state=0. The private answers are the whole new test rows (textID, text,
# selected_text, sentiment); the public test drops selected_text; the sample submission is textID
# with an empty selected_text. Kaggle's one tweet with no text stays an empty field.
# Runs after common.py (args, read_raw_csv, split, constant_sample, write_prepared).

raw, public, private = args()
ID, TARGET = "textID", "selected_text"
COLUMNS = [ID, "text", TARGET, "sentiment"]

old_train = read_raw_csv(raw, "train.csv", COLUMNS, "tweet-sentiment-extraction", unique=ID)
new_train, new_test = split(old_train, 0.1)
write_prepared(public, private, train=new_train, test=new_test.drop(columns=[TARGET]),
               sample=constant_sample(new_test, ID, {TARGET: ""}), answers=new_test)
