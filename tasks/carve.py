# Carves the leak-free validation split out of a prepared task's public train: a seeded share of
# the train rows becomes a test file with the real test's columns, answers with the real answers'
# columns, and a sample submission like the real one; the rest is the validation train.
# With cv_folds set it writes one fold of a partition of the whole train instead (the final
# answer's cross-validation). With stratify set (class-labelled tasks) shares and folds hold
# every class in proportion to its rows.
#   python3 carve.py CONFIG_JSON
import json
import math
import sys
from pathlib import Path

import numpy as np
import pandas as pd

cfg = json.loads(sys.argv[1])
pub, priv = Path(cfg["public"]), Path(cfg["private"])
out_pub, out_priv = Path(cfg["out_public"]), Path(cfg["out_private"])
files = cfg["files"]


def read(path):
    if path.suffix == ".json":
        return pd.read_json(path, orient="records", dtype=False)
    return pd.read_csv(path, dtype=str, keep_default_na=False)


def write(df, path):
    if path.suffix == ".json":
        df.to_json(path, orient="records", indent=4)
    else:
        df.to_csv(path, index=False)


train = read(pub / files["train"])
test_cols = list(read(pub / files["test"]).columns)
answers_cols = list(pd.read_csv(priv / files["answers"], nrows=0).columns)
sample = pd.read_csv(pub / files["sample_submission"], dtype=str, keep_default_na=False)
id_col = cfg["id_column"]

missing = [c for c in test_cols if c not in train.columns]
if missing:
    sys.exit(f"the public test has columns the train lacks ({missing[:5]}): this task cannot be carved")
n = len(train)
fold = cfg.get("fold", 1)
order = np.random.RandomState(cfg["seed"]).permutation(n)
strat = cfg.get("stratify") or []
lacking = [c for c in strat if c not in train.columns]
if lacking:
    sys.exit(f"the spec's target_columns {lacking} are not in the train file: name the train's label columns there")
# A row's class, in the shuffled order: its stratifying columns' values joined.
cls = pd.Series(train[strat].astype(str).agg("\x1f".join, axis=1).values[order]) if strat else None
if cfg.get("cv_folds"):
    # Cross-validation: the folds partition the whole train (sizes differ by at most one row),
    # so their held-out predictions together cover every train row once.
    if cfg["cv_folds"] > n:
        sys.exit(f"{cfg['cv_folds']} cross-validation folds need at least as many train rows, the train has {n}")
    k_folds = cfg["cv_folds"]
    if strat:
        # Stratified: the rows in a random order, grouped by class (stable), are dealt to the
        # folds in turn, so every class is spread as evenly as it can be and fold sizes still
        # differ by at most one row.
        grouped = order[np.argsort(cls.values, kind="stable")]
        held = grouped[fold - 1 :: k_folds]
    else:
        held = np.array_split(order, k_folds)[fold - 1]
    k = len(held)
else:
    k = math.ceil(cfg["fraction"] * n)
    if fold * k > n:
        sys.exit(f"fold {fold} of {k} rows does not fit in the {n} train rows: lower validation.folds or validation.fraction")
    seq = order
    if strat:
        # Stratified shares: each class's rows, in the shuffled order, are spread evenly over
        # [0, 1) from a seeded random offset, and the rows sorted by that place; any run of k
        # consecutive rows then holds every class in proportion (systematic sampling).
        within = cls.groupby(cls).cumcount().values
        size = cls.map(cls.value_counts()).values
        codes = pd.factorize(cls, sort=True)[0]
        offset = np.random.RandomState(cfg["seed"] + 1).uniform(size=codes.max() + 1)[codes]
        seq = order[np.argsort((within + offset) / size, kind="stable")]
    # Folds are consecutive shares of one sequence: fold 1 does not depend on the fold count.
    held = seq[(fold - 1) * k : fold * k]
val_idx, train_idx = np.sort(held), np.sort(np.setdiff1d(order, held))
val = train.iloc[val_idx]

if cfg["format"] == "one-hot":
    target = cfg["target_columns"][0]
    classes = [c for c in answers_cols if c != id_col]
    labels = val[target].astype(str)
    unknown = set(labels) - set(classes)
    if unknown:
        sys.exit(f"labels {sorted(unknown)[:5]} are not answer columns")
    answers = pd.DataFrame({id_col: val[id_col].values})
    for c in classes:
        answers[c] = (labels.values == c).astype(int)
else:
    # The graded columns must come from the train; other columns of the real answers (such as
    # insults' Usage) are kept only when the train has them too.
    graded = cfg["answer_columns"]
    lacking = [c for c in graded if c not in train.columns]
    if lacking:
        sys.exit(f"answer columns {lacking} are not in the train file")
    keep = [c for c in answers_cols if c == id_col or c in train.columns]
    if id_col not in keep:
        keep = [id_col] + keep
    answers = val[keep].copy()
    for c in keep:
        if answers[c].dtype == bool:
            answers[c] = answers[c].astype(int)

sub = pd.DataFrame({c: [sample[c].iloc[0]] * k for c in sample.columns if c != id_col})
sub.insert(list(sample.columns).index(id_col) if id_col in sample.columns else 0, id_col, val[id_col].values)

out_pub.mkdir(parents=True, exist_ok=True)
out_priv.mkdir(parents=True, exist_ok=True)
write(train.iloc[train_idx], out_pub / files["train"])
write(val[test_cols], out_pub / files["test"])
sub.to_csv(out_pub / files["sample_submission"], index=False)
answers.to_csv(out_priv / files["answers"], index=False)

# A shared images folder (plant's images/, the spec's inputs.images) holds the images of every
# public row: link it whole.
images = cfg.get("images") or "images"
if (pub / images).is_dir():
    import os
    import shutil

    shutil.copytree(pub / images, out_pub / images, copy_function=os.link, dirs_exist_ok=True)

# Per-row folders (nomad's train/<id>/geometry.xyz) follow their rows: validation test rows
# get theirs under test/, the rest under train/.
rows_dir = pub / Path(files["train"]).stem
if rows_dir.is_dir():
    import shutil

    test_dir = out_pub / Path(files["test"]).stem
    for dst, part in ((rows_dir.name, train.iloc[train_idx]), (test_dir.name, val)):
        for rid in part[id_col].astype(str):
            src = rows_dir / rid
            if src.is_dir():
                shutil.copytree(src, out_pub / dst / rid, dirs_exist_ok=True)
