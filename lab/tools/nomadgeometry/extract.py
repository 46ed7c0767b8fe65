# Writes the library's geometry feature code from two versions of
# codeactions/tabular_regression.go (DIR/old.go, DIR/new.go) as Python modules DIR/geo_old.py,
# DIR/geo_new.py and their no-periodic-images variants, for speed.py to time and compare.
# Runs on the host (no numpy needed): python3 extract.py DIR
import os, sys

# Before 030780f the periodic images were written inline by the renderer, not as a constant.
INLINE_IMAGES = ("    images = (pos[None, :, :] + (SHIFTS @ lattice)[:, None, :]).reshape(-1, 3)\n"
                 "    image_elem = np.tile(elem, len(SHIFTS))")


def constant(src, name):
    start = src.find(f"const {name} = `")
    if start < 0:
        return None
    start += len(f"const {name} = `")
    return src[start:src.index("`", start)]


out = sys.argv[1]
for tag in ("old", "new"):
    src = open(os.path.join(out, tag + ".go")).read()
    geometry = constant(src, "tabRegGeometry")
    geometry = geometry[: geometry.index("\n\nif os.path.isdir")]  # the function, not its use
    images = constant(src, "tabRegPeriodicImages")
    variants = {"": images or INLINE_IMAGES,
                "_nopbc": "    images, image_code = pos, code" if images else "    images, image_elem = pos, elem"}
    for suffix, fill in variants.items():
        with open(os.path.join(out, f"geo_{tag}{suffix}.py"), "w") as f:
            f.write("import numpy as np\n" + geometry.replace("%s", fill, 1) + "\n")
