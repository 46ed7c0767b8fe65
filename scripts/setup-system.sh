#!/usr/bin/env bash
# Installs the Debian packages agents' programs and the sandbox need. Idempotent: does nothing
# when everything is already there. Agents' programs run on Debian's python3 (no PyPI here).
set -euo pipefail
# chromium renders the Temporal Web UI in a test (headless, no network needed); pyflakes lints
# every rendered program in the code-action tests.
pkgs=(python3 python3-pandas python3-sklearn python3-xgboost python3-scipy python3-pil python3-pyflakes bubblewrap chromium fonts-dejavu-core)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi
echo "installing Debian packages: ${missing[*]}"
SUDO=""
if [ "$(id -u)" != 0 ]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
# Wait for another apt (unattended upgrades, a parallel setup) instead of failing on its lock.
$SUDO apt-get -o DPkg::Lock::Timeout=600 update -qq
$SUDO apt-get -o DPkg::Lock::Timeout=600 install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
