# Writes small synthetic raw files shaped like Kaggle's for one task, for the code-action
# conformance test (conformance_test.go), which runs the task's own preparer on them:
#   python3 conformance_synth.py TASK RAW_DIR
# Each task keeps what makes its real data awkward for a program: string or numeric labels,
# several targets, JSON records with list and boolean fields, negative counts, an id that is the
# text itself, a column only the train has, null turns, an empty tweet, images of two
# orientations and sizes, targets that are exactly 0. Sizes are small (a program runs in seconds)
# but large enough for every model's settings (200 neighbours, 128 principal components).
# Deterministic: every task has its own seeded generator.
#   python3 conformance_synth.py TASK RAW_DIR PROPERTY,...
# gives a tabular task's train the data properties real competitions have (PROPERTIES below),
# alone or combined, on top of its own shape.
import json
import sys
import tarfile
import io
from pathlib import Path

import numpy as np
import pandas as pd

task, raw = sys.argv[1], Path(sys.argv[2])
props = set(sys.argv[3].split(",")) if len(sys.argv) > 3 and sys.argv[3] else set()
raw.mkdir(parents=True, exist_ok=True)
rng = np.random.RandomState(sum(map(ord, task)))

WORDS = ("the a of to and in is it that for on with as was at by this be from or have an they which you were "
         "her all she there would their we him been has when who will more no if out so said what up its about "
         "into than them can only other new some could time these two may then do first any my now such like our "
         "over man me even most made after also did many before must through back years where much your way well "
         "down should because each just those people how too little state good very make world still own see men "
         "work long get here between both life being under never day same another know while last might us great "
         "old year off come since against go came right used take three").split()


# Content words: pseudo-words with Zipf frequencies, so that a vocabulary (without stop words,
# seen in two documents) runs to the thousands, as real text's does.
SYLLABLES = "ka lo mi ren tu sa vor el qui dra no bel ith um zo pha gri tes wan dor".split()
CONTENT = sorted({"".join(np.random.RandomState(k).choice(SYLLABLES, 2 + k % 3)) for k in range(3000)})
ZIPF = 1.0 / np.arange(1, len(CONTENT) + 1) ** 0.8
ZIPF /= ZIPF.sum()


def words(n, extra=(), p_extra=0.0):
    out = []
    for _ in range(n):
        u = rng.rand()
        if extra and u < p_extra:
            out.append(extra[rng.randint(len(extra))])
        elif u < p_extra + 0.45:
            out.append(CONTENT[rng.choice(len(CONTENT), p=ZIPF)])
        else:
            out.append(WORDS[rng.randint(len(WORDS))])
    return " ".join(out)


def sentence(extra=(), p_extra=0.0, lo=5, hi=20):
    s = words(rng.randint(lo, hi), extra, p_extra)
    return s[0].upper() + s[1:] + rng.choice([".", ".", "!", "?", "...", ", and so on."])


def write_csv(name, df):
    if props and name == "train.csv":
        df = with_properties(df)
    df.to_csv(raw / name, index=False)


# The tabular tasks' id and target columns.
TABULAR = {
    "leaf-classification": ("id", ["species"]),
    "tabular-playground-series-dec-2021": ("Id", ["Cover_Type"]),
    "tabular-playground-series-may-2022": ("id", ["target"]),
    "nomad2018-predict-transparent-conductors": ("id", ["formation_energy_ev_natom", "bandgap_energy_ev"]),
}
PROPERTIES = {
    "missing": "5% missing values in every numeric feature column",
    "categorical": "string columns of 3 and of about n/5 levels (each with missing values), and a 0/1/missing boolean",
    "compound": "a deck/number/side string column, with missing values",
    "id-like": "a unique-per-row name column and a unique-per-row integer column",
    "text": "a free-text column with missing values",
    "labels": "boolean labels (dec-2021: a binary target stored as True/False) or integer class names (leaf)",
    "imbalanced": "a class of 2 rows (dec-2021), 6% positives (may-2022), a species of 3 rows (leaf)",
    "many-classes": "40 classes (dec-2021)",
}


def with_properties(df):
    unknown = props - set(PROPERTIES)
    if unknown or task not in TABULAR:
        sys.exit(f"unknown properties {sorted(unknown)} or a task without them ({task}); known: {sorted(PROPERTIES)}")
    prng = np.random.RandomState(len(df) + sum(map(ord, ",".join(sorted(props)))))
    id_col, targets = TABULAR[task]
    df = df.copy()
    n = len(df)
    signal = prng.normal(0, 1, n)
    if task != "nomad2018-predict-transparent-conductors":
        y = df[targets[0]]
        signal = pd.Series(y).astype("category").cat.codes.to_numpy() % 3 + prng.normal(0, 0.5, n)

    def holes(values, share=0.05):
        values = pd.Series(values, index=df.index, dtype=object)
        values[prng.rand(n) < share] = None
        return values

    if "missing" in props:
        for c in df.columns:
            if c != id_col and c not in targets and pd.api.types.is_numeric_dtype(df[c]):
                df[c] = df[c].where(prng.rand(n) >= 0.05)
    if "categorical" in props:
        df["colour"] = holes(np.array(["red", "green", "blue"])[np.clip(signal.round().astype(int), 0, 2)])
        df["town"] = holes([f"town{k}" for k in prng.randint(0, max(2, n // 5), n)])
        df["member"] = holes(prng.rand(n) < 0.4)
    if "compound" in props:
        df["Cabin"] = holes([f"{'ABCDEFG'[prng.randint(7)]}/{prng.randint(0, 2000)}/{'PS'[prng.randint(2)]}" for _ in range(n)])
    if "id-like" in props:
        df["Name"] = [f"Given{k} Family{k * 7 % 1013}" for k in prng.permutation(n)]
        df["ticket"] = prng.choice(10 ** 7, n, replace=False)
    if "text" in props:
        df["note"] = holes([sentence() for _ in range(n)], 0.1)
    if task == "tabular-playground-series-dec-2021":
        if "many-classes" in props:
            df[targets[0]] = 1 + np.arange(n) % 40
        if "imbalanced" in props:
            rare = df[targets[0]] == df[targets[0]].max()
            df.loc[rare[rare].index[2:], targets[0]] = df[targets[0]].min()
        if "labels" in props:
            df[targets[0]] = df[targets[0]] == df[targets[0]].mode()[0]
    if task == "tabular-playground-series-may-2022" and "imbalanced" in props:
        pos = df.index[df[targets[0]] == 1]
        df.loc[pos[: int(len(pos) * 0.88)], targets[0]] = 0
    if task == "leaf-classification":
        if "imbalanced" in props:
            first = df[targets[0]].iloc[0]
            rows = df.index[df[targets[0]] == first]
            df = df.drop(rows[3:])
        if "labels" in props:
            df[targets[0]] = df[targets[0]].astype("category").cat.codes + 1
    return df


def leaf():
    species = ["Acer_Capillipes", "Acer_Circinatum", "Acer_Mono", "Acer_Opalus", "Alnus_Sieboldii",
               "Betula_Austrocanescens", "Castanea_Sativa", "Cornus_Chinensis", "Quercus_Rubra",
               "Salix_Intergra", "Tilia_Oliveri", "Zelkova_Serrata"]
    per, k = 15, 16
    labels = np.repeat(np.arange(len(species)), per)
    rng.shuffle(labels)
    cols = {}
    for group in ("margin", "shape", "texture"):
        centres = rng.gamma(2.0, 0.01, size=(len(species), k))
        for j in range(k):
            cols[f"{group}{j + 1}"] = np.round(np.abs(centres[labels, j] + rng.normal(0, 0.006, len(labels))), 6)
    df = pd.DataFrame({"id": rng.choice(np.arange(1, 1600), len(labels), replace=False),
                       "species": [species[i] for i in labels], **cols})
    write_csv("train.csv", df)


def dec():
    n = 420
    probs = np.array([0.3, 0.38, 0.1, 0.04, 0.04, 0.07, 0.07])
    y = rng.choice(np.arange(1, 8), n, p=probs)
    y[:7 * 8] = np.repeat(np.arange(1, 8), 8)  # every cover type often enough to split
    rng.shuffle(y)
    df = pd.DataFrame({"Id": rng.choice(4000000, n, replace=False)})
    df["Elevation"] = (2400 + 120 * y + rng.normal(0, 150, n)).astype(int)
    df["Aspect"] = rng.randint(-30, 400, n)  # the synthetic competition data has negative angles
    df["Slope"] = rng.randint(-3, 60, n)
    df["Horizontal_Distance_To_Hydrology"] = rng.randint(-50, 1200, n)
    df["Vertical_Distance_To_Hydrology"] = rng.randint(-150, 500, n)
    df["Horizontal_Distance_To_Roadways"] = (300 * y + rng.randint(-200, 3000, n))
    df["Hillshade_9am"] = rng.randint(0, 256, n)
    df["Hillshade_Noon"] = rng.randint(0, 256, n)
    df["Hillshade_3pm"] = rng.randint(0, 256, n)
    df["Horizontal_Distance_To_Fire_Points"] = rng.randint(-100, 6000, n)
    area = (y + rng.randint(0, 2, n)) % 4
    for j in range(4):
        df[f"Wilderness_Area{j + 1}"] = (area == j).astype(int)
    soil = (2 * y + rng.randint(0, 3, n)) % 12
    for j in range(12):
        df[f"Soil_Type{j + 1}"] = (soil == j).astype(int)
    df["Cover_Type"] = y
    write_csv("train.csv", df)


def may():
    n = 405
    df = pd.DataFrame({"id": np.arange(n)})
    z = np.zeros(n)
    for j in range(31):
        name = f"f_{j:02d}"
        if j == 27:  # ten letters, the competition's most telling feature
            df[name] = ["".join(rng.choice(list("ABCDEFGHIJKLMNOPQRST"), 10)) for _ in range(n)]
            z += np.array([s.count("A") - s.count("B") for s in df[name]]) * 0.5
        elif 7 <= j <= 18:
            df[name] = rng.poisson(2 + j % 5, n)
        elif j == 29:
            df[name] = rng.randint(0, 2, n)
        elif j == 30:
            df[name] = rng.randint(0, 3, n)
        else:
            df[name] = np.round(rng.normal(0, 1.5, n), 6)
            if j in (0, 1, 21, 22):
                z += df[name] * (1 if j % 2 else -0.8)
    df["target"] = (z + rng.normal(0, 1, n) > 0).astype(int)
    write_csv("train.csv", df)


def nomad():
    n = 200
    df = pd.DataFrame({"id": np.arange(1, n + 1)})
    df["spacegroup"] = rng.choice([12, 33, 167, 194, 206, 227], n)
    df["number_of_total_atoms"] = rng.choice([10.0, 20.0, 30.0, 40.0, 60.0, 80.0], n)
    al = rng.randint(0, 33, n) / 32
    ga = np.array([rng.randint(0, 33 - int(a * 32)) / 32 for a in al])
    df["percent_atom_al"], df["percent_atom_ga"], df["percent_atom_in"] = al, ga, np.round(1 - al - ga, 5)
    for k in range(1, 4):
        df[f"lattice_vector_{k}_ang"] = np.round(rng.uniform(3, 25, n), 4)
    for a in ("alpha", "beta", "gamma"):
        df[f"lattice_angle_{a}_degree"] = np.round(rng.choice([90.0, 90.0, 120.0], n) + rng.normal(0, 0.01, n), 4)
    fe = np.round(np.clip(0.05 + 0.25 * df["percent_atom_in"] - 0.1 * al + rng.normal(0, 0.05, n), 0, None), 4)
    fe[rng.choice(n, 8, replace=False)] = 0.0  # the real train has formation energies of exactly 0
    df["formation_energy_ev_natom"] = fe
    df["bandgap_energy_ev"] = np.round(np.clip(1.0 + 4 * al - 1.5 * df["percent_atom_in"] + rng.normal(0, 0.3, n), 0.0001, None), 4)
    write_csv("train.csv", df)
    with tarfile.open(raw / "geometry_xyz.tar.gz", "w:gz") as tar:
        for i, row in df.iterrows():
            lattice = np.diag([row["lattice_vector_1_ang"], row["lattice_vector_2_ang"], row["lattice_vector_3_ang"]])
            lattice += rng.normal(0, 0.03, (3, 3))
            lines = ["#" + "=" * 55, "#Created using the Atomic Simulation Environment (ASE)", "#" + "=" * 55]
            lines += ["lattice_vector " + " ".join(f"{v:.16f}" for v in vec) + " " for vec in lattice]
            share = np.maximum([row["percent_atom_al"], row["percent_atom_ga"], row["percent_atom_in"]], 0.01)
            metals = rng.choice(["Al", "Ga", "In"], 4, p=share / share.sum())
            for e in list(metals) + ["O"] * 6:
                pos = rng.uniform(0, 1, 3) @ lattice
                lines.append("atom " + " ".join(f"{v:.16f}" for v in pos) + " " + e)
            data = ("\n".join(lines) + "\n").encode()
            info = tarfile.TarInfo(f"train/{int(row['id'])}/geometry.xyz")
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))


GOOD = "thanks please grateful family kids job rent paid forward student hungry broke".split()


def pizza():
    def record(i, train):
        got = rng.rand() < 0.3
        title = "[Request] " + words(rng.randint(3, 9), GOOD, 0.3 if got else 0.05)
        text = " ".join(sentence(GOOD, 0.2 if got else 0.03) for _ in range(rng.randint(1, 5)))
        if rng.rand() < 0.1:
            text = ""
        age = float(np.round(rng.exponential(300), 6))
        up = int(rng.poisson(200))
        r = {
            "giver_username_if_known": rng.choice(["N/A"] * 9 + ["kind_giver"]),
            "request_id": f"t3_{i:05x}{rng.randint(16 ** 2):02x}",
            "request_text_edit_aware": text,
            "request_title": title,
            "requester_account_age_in_days_at_request": age,
            "requester_days_since_first_post_on_raop_at_request": float(np.round(rng.exponential(20) * (rng.rand() < 0.3), 6)),
            "requester_number_of_comments_at_request": int(rng.poisson(40)),
            "requester_number_of_comments_in_raop_at_request": int(rng.poisson(0.5)),
            "requester_number_of_posts_at_request": int(rng.poisson(10)),
            "requester_number_of_posts_on_raop_at_request": int(rng.poisson(0.2)),
            "requester_number_of_subreddits_at_request": int(rng.poisson(15)),
            "requester_subreddits_at_request": list(rng.choice(["AskReddit", "pics", "funny", "Random_Acts_Of_Pizza", "gaming"],
                                                               rng.randint(0, 4), replace=False)),
            # Karma can be negative: log1p of it is NaN.
            "requester_upvotes_minus_downvotes_at_request": int(up * rng.uniform(-0.3, 1)),
            "requester_upvotes_plus_downvotes_at_request": up,
            "requester_username": f"user{i}",
            "unix_timestamp_of_request": float(1.3e9 + rng.randint(0, 6e7)),
        }
        r["unix_timestamp_of_request_utc"] = r["unix_timestamp_of_request"] - 3600.0
        if train:  # the fields only the train has: at retrieval, the outcome and its leaks
            r.update({
                "number_of_downvotes_of_request_at_retrieval": int(rng.poisson(2)),
                "number_of_upvotes_of_request_at_retrieval": int(rng.poisson(5)),
                "post_was_edited": bool(rng.rand() < 0.1) if rng.rand() < 0.9 else float(1.35e9),
                "request_number_of_comments_at_retrieval": int(rng.poisson(3)),
                "request_text": text,
                "requester_account_age_in_days_at_retrieval": age + 700.5,
                "requester_received_pizza": bool(got),
                "requester_upvotes_minus_downvotes_at_retrieval": int(up * rng.uniform(-0.3, 1.2)),
                "requester_user_flair": ("shroom" if rng.rand() < 0.8 else "PIF") if got else None,
            })
        return r

    train = [record(i, True) for i in range(300)]
    test = [record(1000 + i, False) for i in range(100)]
    with open(raw / "train.json", "w") as f:
        json.dump(train, f, indent=4)
    with open(raw / "test.json", "w") as f:
        json.dump(test, f, indent=4)


INSULTS = "idiot stupid moron loser dumb shut fool pathetic ignorant clown".split()


def insults():
    def rows(n):
        out = []
        for _ in range(n):
            bad = rng.rand() < 0.3
            text = " ".join(sentence(INSULTS, 0.25 if bad else 0.01) for _ in range(rng.randint(1, 4)))
            if rng.rand() < 0.2:
                text = text.replace(" ", "\\xa0", 1) + "\\n\\nreally"
            date = f"2012{rng.randint(1, 13):02d}{rng.randint(1, 29):02d}{rng.randint(0, 24):02d}{rng.randint(0, 60):02d}00Z" if rng.rand() < 0.8 else ""
            # Comments are quoted inside their field, as Kaggle's are.
            out.append({"Insult": int(bad), "Date": date, "Comment": '"' + text + '"'})
        return pd.DataFrame(out)

    train, test = rows(450), rows(150)
    test.loc[5, "Comment"] = test.loc[4, "Comment"]  # a comment twice: the id repeats
    write_csv("train.csv", train)
    test["Usage"] = rng.choice(["PublicTest", "PrivateTest"], len(test))
    write_csv("test_with_solutions.csv", test)


AUTHORS = {"EAP": "raven dream ghastly thus upon".split(), "HPL": "eldritch cyclopean abyss nameless ancient".split(),
           "MWS": "misery tears beloved affection wretched".split()}


def spooky():
    n = 450
    authors = rng.choice(list(AUTHORS), n, p=[0.4, 0.29, 0.31])
    df = pd.DataFrame({"id": [f"id{i:05d}" for i in rng.choice(99999, n, replace=False)],
                       "text": [sentence(AUTHORS[a], 0.15, 8, 30) for a in authors], "author": authors})
    write_csv("train.csv", df)


ADVANCED = "thus hence vital sound moral civic prove argue claim valid merit nuance".split()
SLOPPY = "stuff lol gonna kinda u ur dunno cuz yeah wanna alot dont".split()


def essays():
    n = 300
    scores = rng.choice(np.arange(1, 7), n, p=[0.08, 0.26, 0.34, 0.2, 0.08, 0.04])
    scores[:6 * 8] = np.repeat(np.arange(1, 7), 8)
    rng.shuffle(scores)
    texts = []
    for s in scores:
        paragraphs = []
        for _ in range(max(1, s - rng.randint(0, 3))):
            paragraphs.append(" ".join(sentence(ADVANCED if s > 3 else SLOPPY, 0.04 * abs(s - 3.5), 6, 14)
                                       for _ in range(rng.randint(1, 2 + s))))
        texts.append("\n\n".join(paragraphs))
    df = pd.DataFrame({"essay_id": [f"{0x1000000 + 7919 * i:07x}" for i in range(n)], "full_text": texts, "score": scores})
    write_csv("train.csv", df)


FENCE = "\x60" * 3


def arena():
    bots = ["gpt-4-1106-preview", "claude-2.1", "gpt-3.5-turbo-0613", "llama-2-70b-chat", "mistral-medium", "vicuna-13b"]
    n = 420
    rows = []
    for i in range(n):
        a, b = rng.choice(len(bots), 2, replace=False)
        turns = 2 if rng.rand() < 0.15 else 1
        prompt, ra, rb, qa, qb = [], [], [], 0.0, 0.0
        for _ in range(turns):
            prompt.append(sentence() + "?")
            for side, bot in (("a", a), ("b", b)):
                k = rng.randint(5, 60) + 10 * (len(bots) - bot)
                text = " ".join(sentence() for _ in range(max(1, k // 10)))
                if rng.rand() < 0.2:
                    text = "Certainly! " + text + "\n\n- " + words(4) + "\n- " + words(3)
                if rng.rand() < 0.08:
                    text += "\n\n" + FENCE + "python\nprint(\"caf\u00e9\")\n" + FENCE
                (ra if side == "a" else rb).append(text)
                if side == "a":
                    qa += np.log(len(text))
                else:
                    qb += np.log(len(text))
        if turns == 2 and rng.rand() < 0.4:
            ra[1] = None  # a null turn, as the competition's data has
        d = qa - qb
        p = np.exp([d, -d, 0.3])
        win = rng.choice(3, p=p / p.sum())
        rows.append({"id": 30192 + 104729 * i, "model_a": bots[a], "model_b": bots[b], "prompt": json.dumps(prompt),
                     "response_a": json.dumps(ra), "response_b": json.dumps(rb),
                     "winner_model_a": int(win == 0), "winner_model_b": int(win == 1), "winner_tie": int(win == 2)})
    write_csv("train.csv", pd.DataFrame(rows))


TOPICS = {"A": "food shoe chair table bed garment medicine tooth brush bottle".split(),
          "B": "vehicle wheel brake axle press cutter blade conveyor roller wagon".split(),
          "C": "polymer resin acid catalyst solvent crystal alloy oxide salt ester".split(),
          "G": "sensor lens mirror laser signal clock meter display camera detector".split(),
          "H": "battery cable wire switch antenna transistor diode capacitor resistor magnet".split()}
MODIFIERS = "rotating flexible rigid hollow thin thick electric automatic portable adjustable".split()


def patents():
    n = 420
    rows = []
    for i in range(n):
        sec = rng.choice(list(TOPICS))
        ctx = sec + rng.choice(["01", "47", "61"])
        if i % 150 == 7:
            ctx = "F41"  # a context so rare only the train has it
        anchor = [rng.choice(MODIFIERS), rng.choice(TOPICS[sec])]
        u = rng.rand()
        if u < 0.2:
            target, score = [anchor[1] + "s"], 1.0
        elif u < 0.5:
            target, score = [rng.choice(MODIFIERS), anchor[1]], 0.75
        elif u < 0.8:
            target, score = [rng.choice(TOPICS[sec])], 0.25
        else:
            target, score = [rng.choice(TOPICS[rng.choice([s for s in TOPICS if s != sec])])], 0.0
        if rng.rand() < 0.1:
            score = min(1.0, score + 0.25)
        rows.append({"id": f"{rng.randint(2 ** 62):016x}", "anchor": " ".join(anchor), "target": " ".join(target),
                     "context": ctx, "score": score})
    write_csv("train.csv", pd.DataFrame(rows))


POS = "love good great happy awesome nice fun thanks best amazing".split()
NEG = "sad hate bad miss sorry sucks tired sick hurts worst".split()


def tweets():
    n = 300
    rows = []
    for i in range(n):
        sent = rng.choice(["neutral", "positive", "negative"], p=[0.4, 0.31, 0.29])
        toks = words(rng.randint(3, 16)).split()
        if rng.rand() < 0.3:
            toks[rng.randint(len(toks))] += rng.choice([",", "!", "...", "?"])
        if rng.rand() < 0.1:
            toks[0] = '"' + toks[0] + '"'
        if sent == "neutral":
            text = " ".join(toks)
            sel = text
        else:
            at = rng.randint(len(toks) + 1)
            phrase = [rng.choice(POS if sent == "positive" else NEG)]
            if rng.rand() < 0.3:
                phrase = ["so"] + phrase
            toks = toks[:at] + phrase + toks[at:]
            text = " ".join(toks)
            sel = " ".join(toks[max(0, at - rng.randint(0, 2)): at + len(phrase)])
        rows.append({"textID": f"{rng.randint(16 ** 10):010x}", "text": text, "selected_text": sel, "sentiment": sent})
    # Kaggle's train has one tweet without text; this row lands in the validation train.
    rows[11] = {"textID": "fdb77c3752", "text": "", "selected_text": "", "sentiment": "neutral"}
    write_csv("train.csv", pd.DataFrame(rows))


def plants():
    from PIL import Image

    classes = ["healthy", "multiple_diseases", "rust", "scab"]
    n = 170
    labels = rng.choice(4, n, p=[0.3, 0.1, 0.3, 0.3])
    labels[:4 * 12] = np.repeat(np.arange(4), 12)
    rng.shuffle(labels)
    (raw / "images").mkdir(exist_ok=True)
    # Landscape and portrait, in two sizes of the same aspect: stacking raw pixels at the
    # original size fails, as on the real images.
    sizes = [(48, 32), (48, 32), (32, 48), (60, 40)]
    ids = [f"Train_{i}" for i in range(n)]
    for i, lab in zip(ids, labels):
        w, h = sizes[rng.randint(len(sizes))]
        img = np.empty((h, w, 3))
        img[:] = np.array([70, 135, 50]) + rng.normal(0, 12, 3)
        img += rng.normal(0, 10, (h, w, 3))
        spots = {0: 0, 1: 3, 2: 4, 3: 4}[lab]
        colour = {1: (200, 120, 60), 2: (215, 140, 40), 3: (105, 85, 45)}.get(lab, (0, 0, 0))
        for _ in range(spots):
            y, x = rng.randint(2, h - 6), rng.randint(2, w - 6)
            img[y:y + 5, x:x + 5] = colour
        Image.fromarray(np.clip(img, 0, 255).astype(np.uint8)).save(raw / "images" / f"{i}.jpg", quality=90)
    df = pd.DataFrame({"image_id": ids})
    for k, c in enumerate(classes):
        df[c] = (labels == k).astype(int)
    write_csv("train.csv", df)


def cactus():
    # 32x32 photos named by their id (x.jpg), zipped in train/ as Kaggle ships them; a cactus is
    # a dark green vertical stripe on sandy ground.
    import zipfile
    from PIL import Image

    n = 200
    labels = (rng.rand(n) < 0.75).astype(int)
    ids = [f"{rng.randint(1 << 30):08x}{i:04d}.jpg" for i in range(n)]
    with zipfile.ZipFile(raw / "train.zip", "w") as z:
        for i, lab in zip(ids, labels):
            img = np.empty((32, 32, 3))
            img[:] = np.array([170, 150, 120]) + rng.normal(0, 15, 3)
            img += rng.normal(0, 12, (32, 32, 3))
            if lab:
                x = rng.randint(4, 26)
                img[:, x:x + 3] = np.array([50, 90, 45]) + rng.normal(0, 10, 3)
            buf = io.BytesIO()
            Image.fromarray(np.clip(img, 0, 255).astype(np.uint8)).save(buf, "JPEG", quality=90)
            z.writestr(f"train/{i}", buf.getvalue())
    write_csv("train.csv", pd.DataFrame({"id": ids, "has_cactus": labels}))


MOODS = {0: "awful dull mess worst".split(), 1: "flat tired weak bland".split(), 2: [],
         3: "charming solid fun warm".split(), 4: "brilliant superb masterpiece moving".split()}


def movies():
    # Phrases of sentences (several per SentenceId), tab-separated in a zip as Kaggle ships them.
    import zipfile

    rows, pid = [], 1
    for sid in range(1, 121):
        sentiment = rng.choice(5, p=[0.1, 0.2, 0.4, 0.2, 0.1])
        text = sentence(MOODS[sentiment], 0.2, 6, 18).split()
        for k in range(rng.randint(2, 6)):
            a = rng.randint(0, len(text))
            phrase = " ".join(text[a:a + rng.randint(1, len(text) - a + 1)])
            rows.append((pid, sid, phrase, sentiment if k == 0 or rng.rand() < 0.6 else 2))
            pid += 1
    df = pd.DataFrame(rows, columns=["PhraseId", "SentenceId", "Phrase", "Sentiment"])
    with zipfile.ZipFile(raw / "train.tsv.zip", "w") as z:
        z.writestr("train.tsv", df.to_csv(sep="\t", index=False))


def documents():
    # Pages of the denoising task: its own generator writes train/ and train_cleaned/.
    import subprocess

    subprocess.run([sys.executable, str(Path(__file__).with_name("denoising_synth.py")), str(raw)], check=True)


{
    "denoising-dirty-documents": documents,
    "aerial-cactus-identification": cactus,
    "movie-review-sentiment-analysis-kernels-only": movies,
    "leaf-classification": leaf,
    "tabular-playground-series-dec-2021": dec,
    "tabular-playground-series-may-2022": may,
    "nomad2018-predict-transparent-conductors": nomad,
    "random-acts-of-pizza": pizza,
    "detecting-insults-in-social-commentary": insults,
    "spooky-author-identification": spooky,
    "learning-agency-lab-automated-essay-scoring-2": essays,
    "lmsys-chatbot-arena": arena,
    "us-patent-phrase-to-phrase-matching": patents,
    "tweet-sentiment-extraction": tweets,
    "plant-pathology-2020-fgvc7": plants,
}[task]()
