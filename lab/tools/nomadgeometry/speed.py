# Times the library's geometry features before and after a change (modules written by
# extract.py into /geo) over every structure in input/, and checks they give the same values.
# Run in the sandbox image with no network (see RESULTS.md for the command).
import glob, importlib, sys, time

sys.path.insert(0, "/geo")
paths = sorted(glob.glob("input/train/*/geometry.xyz") + glob.glob("input/test/*/geometry.xyz"))
for p in paths:  # warm the page cache, so the first version timed does not pay for the reads
    open(p).read()
for suffix in ["", "_nopbc"]:
    seconds, features = {}, {}
    for tag in ("old", "new"):
        module = importlib.import_module(f"geo_{tag}{suffix}")
        module.geometry_features(paths[0])  # and numpy's lazy first calls
        start = time.time()
        features[tag] = [module.geometry_features(p) for p in paths]
        seconds[tag] = time.time() - start
    same_keys = all(a.keys() == b.keys() for a, b in zip(features["old"], features["new"]))
    worst = max(abs(a[k] - b[k]) for a, b in zip(features["old"], features["new"]) for k in a)
    print(f"{suffix or 'pbc'}: {len(paths)} structures; ms a structure: old {1000 * seconds['old'] / len(paths):.2f},"
          f" new {1000 * seconds['new'] / len(paths):.2f}; same keys {same_keys}; largest difference {worst:.2g}", flush=True)
