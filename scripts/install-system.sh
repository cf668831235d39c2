#!/usr/bin/env bash
# Installs the Debian/Ubuntu packages hud-gym needs on the host, when they are missing.
# As root it runs apt-get; otherwise it prints the exact command to run and fails.
# Usage: scripts/install-system.sh [--check] [PACKAGE...]
#   no PACKAGE: the desktop packages of docker/ubuntu/packages.txt (the same list, through the
#   same script, as the hud/Ubuntu-v0 Docker image) plus the host-only ones below;
#   PACKAGEs given: only those (e.g. `scripts/install-system.sh chromium-driver`).
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
installer="$root/docker/ubuntu/install.sh"

# Host-only packages, besides the desktop: the browser gym's Chromium and the fonts it renders with,
# and scrot, which pyautogui.screenshot() needs on X11 (benchmarks/ubuntu_step.py compares with it).
HOST_PACKAGES=(chromium fonts-liberation fonts-noto-cjk scrot)

options=()
packages=()
for arg in "$@"; do
  case "$arg" in
    -*) options+=("$arg") ;;
    *) packages+=("$arg") ;;
  esac
done

if [[ ${#packages[@]} -gt 0 ]]; then
  exec bash "$installer" "${options[@]+"${options[@]}"}" --no-desktop "${packages[@]}"
fi
exec bash "$installer" "${options[@]+"${options[@]}"}" "${HOST_PACKAGES[@]}"
