# Splits Kaggle's raw lmsys-chatbot-arena train.csv as MLE-bench does: train_test_split with
# test_size=0.1 and random_state=0. The private answers (answers.csv) are the whole new test rows
# (with the model names and the three winner columns); the public test keeps id, prompt,
# response_a and response_b; the sample submission gives each outcome 1/3.
# Runs after common.py (args, read_raw_csv, split, constant_sample, write_prepared).

raw, public, private = args()
ID = "id"
TEST_COLUMNS = [ID, "prompt", "response_a", "response_b"]
TARGETS = ["winner_model_a", "winner_model_b", "winner_tie"]

old_train = read_raw_csv(raw, "train.csv", TEST_COLUMNS + TARGETS, "lmsys-chatbot-arena", unique=ID)
new_train, answers = split(old_train, 0.1)
write_prepared(public, private, train=new_train, test=answers[TEST_COLUMNS].copy(),
               sample=constant_sample(answers, ID, dict.fromkeys(TARGETS, 0.3333333333333333)),
               answers=answers, answers_name="answers.csv")
