#!/usr/bin/env bash
# Installs the Debian/Ubuntu packages hud-gym needs, when they are missing.
# As root it runs apt-get; otherwise it prints the exact command to run and fails.
# Usage: scripts/install-system.sh [PACKAGE...]   (defaults to the packages listed below)
set -euo pipefail

# Packages the test suite and the demo need on the host.
DEFAULT_PACKAGES=(chromium fonts-liberation fonts-noto-cjk)

packages=("$@")
[[ ${#packages[@]} -gt 0 ]] || packages=("${DEFAULT_PACKAGES[@]+"${DEFAULT_PACKAGES[@]}"}")
[[ ${#packages[@]} -gt 0 ]] || exit 0

if ! command -v dpkg-query >/dev/null 2>&1; then
  echo "hud-gym: not a Debian/Ubuntu system; install these packages yourself: ${packages[*]}" >&2
  exit 0
fi

missing=()
for pkg in "${packages[@]}"; do
  status=$(dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null || true)
  [[ "$status" == "install ok installed" ]] || missing+=("$pkg")
done
[[ ${#missing[@]} -gt 0 ]] || exit 0

if [[ $(id -u) -ne 0 ]]; then
  echo "hud-gym: missing system packages. Run:" >&2
  echo "  sudo apt-get update && sudo apt-get install -y --no-install-recommends ${missing[*]}" >&2
  exit 1
fi

echo "hud-gym: installing system packages: ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}"
