#!/usr/bin/env bash
# Installs the Debian/Ubuntu packages of the hud/Ubuntu-v0 desktop (docker/ubuntu/packages.txt)
# and any PACKAGE given, those not yet installed. The single code path for the Docker image (its
# Dockerfile runs this script) and the host (scripts/install-system.sh, run by `make demo` and
# `make test`, calls it too), so the image and CI install the same desktop.
#
# Usage: docker/ubuntu/install.sh [--check] [--list] [--no-desktop] [PACKAGE...]
#   --check       install nothing; exit 1 and name the missing packages if any
#   --list        print the packages considered, one a line, and exit
#   --no-desktop  only the PACKAGEs given, not the ones of packages.txt
# As root it runs apt-get; otherwise it prints the exact command to run and fails.
# HUD_GYM_APT_CLEAN=1 removes apt's package lists afterwards (smaller image layers).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
packages_file="${HUD_GYM_PACKAGES_FILE:-$here/packages.txt}"

check=0 list=0 desktop=1
extra=()
for arg in "$@"; do
  case "$arg" in
    --check) check=1 ;;
    --list) list=1 ;;
    --no-desktop) desktop=0 ;;
    -*) echo "install.sh: unknown option $arg" >&2; exit 2 ;;
    *) extra+=("$arg") ;;
  esac
done

packages=()
if [[ $desktop -eq 1 ]]; then
  [[ -r "$packages_file" ]] || { echo "install.sh: cannot read $packages_file" >&2; exit 2; }
  while IFS= read -r line || [[ -n "$line" ]]; do
    line="${line%%#*}"
    for word in $line; do packages+=("$word"); done
  done < "$packages_file"
fi
packages+=("${extra[@]+"${extra[@]}"}")

if [[ $list -eq 1 ]]; then
  [[ ${#packages[@]} -eq 0 ]] || printf '%s\n' "${packages[@]}"
  exit 0
fi
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

if [[ $check -eq 1 ]]; then
  [[ ${#missing[@]} -eq 0 ]] || { echo "hud-gym: missing system packages: ${missing[*]}" >&2; exit 1; }
  exit 0
fi
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
if [[ "${HUD_GYM_APT_CLEAN:-0}" == "1" ]]; then
  apt-get clean
  rm -rf /var/lib/apt/lists/*
fi
