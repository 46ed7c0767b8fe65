# Writes small synthetic raw files for denoising-dirty-documents into RAW: train/ and
# train_cleaned/ folders of PNG pages (Kaggle's zips extracted), two page sizes as on the real
# data. A clean page is white with dark strokes (text lines); its noisy version adds a smooth
# stain, a paper grain and faded ink, so that the background and window features help.
#   python3 denoising_synth.py RAW
import sys
from pathlib import Path

import numpy as np
from PIL import Image

raw = Path(sys.argv[1])
rng = np.random.RandomState(62)
for d in ("train", "train_cleaned"):
    (raw / d).mkdir(parents=True, exist_ok=True)
for i in range(1, 21):
    h, w = (40, 64) if i % 3 else (28, 64)
    clean = np.ones((h, w))
    for top in range(4, h - 6, 8):
        for left in range(2, w - 4, 5):
            if rng.rand() < 0.8:
                clean[top:top + 4, left:left + rng.randint(2, 4)] = rng.uniform(0.0, 0.2)
    yy, xx = np.mgrid[0:h, 0:w]
    stain = rng.uniform(0.1, 0.4) * np.exp(-((yy - rng.randint(h)) ** 2 + (xx - rng.randint(w)) ** 2) / (2 * rng.uniform(50, 200)))
    noisy = np.where(clean < 0.5, clean + rng.uniform(0.1, 0.3), clean - stain) + rng.normal(0, 0.04, (h, w))
    for d, img in (("train", noisy), ("train_cleaned", clean)):
        Image.fromarray((np.clip(img, 0, 1) * 255).round().astype(np.uint8), mode="L").save(raw / d / f"{i}.png")
