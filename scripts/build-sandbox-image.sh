#!/usr/bin/env bash
# Builds the Docker sandbox image without a container registry: debootstrap makes a minimal
# Debian bookworm root filesystem holding python3 with pandas, scikit-learn, xgboost, scipy and Pillow
# from Debian's own packages (the mirror apt already uses here), and `docker import` turns it
# into an image. Idempotent: does nothing when the image exists. Takes a few minutes and about
# 1.2 GB of disk. With a registry, deployments/sandbox/Dockerfile builds the same thing.
set -euo pipefail
IMAGE="${IMAGE:-mlerl-sandbox:bookworm}"
SUITE=bookworm
PACKAGES=python3,python3-pandas,python3-sklearn,python3-xgboost,python3-scipy,python3-pil

# An image from before Pillow joined the list is rebuilt.
if docker image inspect "$IMAGE" >/dev/null 2>&1 &&
  docker run --rm --network none "$IMAGE" python3 -c "import pandas, sklearn, xgboost, scipy, PIL" >/dev/null 2>&1; then
  echo "$IMAGE exists"
  exit 0
fi
SUDO=""
if [ "$(id -u)" != 0 ]; then SUDO="sudo"; fi
if ! command -v debootstrap >/dev/null; then
  echo "installing debootstrap"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends debootstrap >/dev/null
fi

# The mirror apt uses for the main suite (not -security or -updates), from one-line .list
# entries or deb822 .sources stanzas; Debian's default when none names bookworm.
mirror_from_apt() {
  local f
  for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
    [ -f "$f" ] || continue
    awk -v s="$SUITE" '$1 == "deb" { i = 2; if ($2 ~ /^\[/) while ($i !~ /\]$/) i++; if ($2 ~ /^\[/) i++;
      if ($(i + 1) == s) { print $i; exit } }' "$f"
  done
  for f in /etc/apt/sources.list.d/*.sources; do
    [ -f "$f" ] || continue
    awk -v s="$SUITE" 'BEGIN { RS = ""; FS = "\n" } {
      uri = ""; ok = 0; deb = 0
      for (i = 1; i <= NF; i++) {
        if ($i ~ /^URIs:/) { split($i, u, /[ \t]+/); uri = u[2] }
        if ($i ~ /^Types:/ && $i ~ /[ \t]deb([ \t]|$)/) deb = 1
        if ($i ~ /^Suites:/) { n = split($i, w, /[ \t]+/); for (j = 2; j <= n; j++) if (w[j] == s) ok = 1 }
      }
      if (ok && deb && uri != "") { print uri; exit } }' "$f"
  done
}
MIRROR="${MIRROR:-$(mirror_from_apt | head -n1)}"
MIRROR="${MIRROR:-http://deb.debian.org/debian}"

WORK="$(mktemp -d "${TMPDIR:-/var/tmp}/mlerl-sandbox-rootfs.XXXXXX")"
# debootstrap mounts /proc, /sys and sometimes the host's /dev inside the rootfs, and leaves
# them mounted when it fails: unmount first, and never let rm cross into another filesystem.
cleanup() {
  # grep finds nothing when no mount was left: not a failure (pipefail and -e apply here too).
  { grep -o " $WORK/[^ ]*" /proc/mounts || true; } | sort -r | while read -r m; do $SUDO umount -l "$m" || true; done
  $SUDO rm -rf --one-file-system "$WORK"
}
trap cleanup EXIT
ROOTFS="$WORK/rootfs"

echo "debootstrap $SUITE from $MIRROR into $ROOTFS (a few minutes)"
start=$(date +%s)
$SUDO debootstrap --variant=minbase --include="$PACKAGES" "$SUITE" "$ROOTFS" "$MIRROR" >"$WORK/debootstrap.log" 2>&1 || {
  tail -n 40 "$WORK/debootstrap.log" >&2
  exit 1
}
# The image never runs apt: drop its caches and lists, and the docs nothing reads.
$SUDO rm -rf "$ROOTFS"/var/cache/apt/archives/*.deb "$ROOTFS"/var/lib/apt/lists/* \
  "$ROOTFS"/usr/share/doc/* "$ROOTFS"/usr/share/man/* "$ROOTFS"/usr/share/info/*
$SUDO chroot "$ROOTFS" /usr/bin/python3 -c "import pandas, sklearn, xgboost, scipy, PIL; print('python3 with pandas', pandas.__version__, 'scikit-learn', sklearn.__version__, 'xgboost', xgboost.__version__, 'scipy', scipy.__version__, 'Pillow', PIL.__version__)"

echo "importing as $IMAGE"
$SUDO tar -C "$ROOTFS" --numeric-owner --one-file-system -c . | docker import \
  --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
  --change 'ENV LANG=C.UTF-8' \
  --change 'WORKDIR /work' \
  --change 'CMD ["/usr/bin/python3"]' \
  --message "mlerl sandbox: Debian $SUITE minbase with python3, pandas, scikit-learn, xgboost, scipy, Pillow" \
  - "$IMAGE" >/dev/null
echo "built $IMAGE in $(( $(date +%s) - start ))s: $(docker image inspect -f '{{.Size}}' "$IMAGE" | awk '{ printf "%.2f GB", $1 / 1e9 }')"
