#!/usr/bin/env bash
# Builds the wheel and the sdist, installs the wheel (with the miniwob and ubuntu extras) into a clean venv, and
# runs the installed package from outside the checkout: `hud-gym doctor`, the QA demo and a
# two-task MiniWoB++ run. CI runs it after `make test` (`make wheel-smoke`), so a module or data file
# missing from the wheel fails CI, which the editable install of `make test` cannot see.
# Usage: scripts/wheel-smoke.sh [PYTHON]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
python="${1:-python3}"
work="$(mktemp -d -t hud-gym-wheel-XXXXXX)"
trap 'rm -rf "$work"' EXIT

"$python" -m pip --version >/dev/null
"$root/.venv/bin/python" -m build --sdist --wheel --outdir "$work/dist" "$root" >"$work/build.log" 2>&1 \
  || { tail -20 "$work/build.log"; exit 1; }
wheel="$(ls "$work"/dist/*.whl)"
ls "$work"/dist/*.tar.gz >/dev/null
echo "built $(basename "$wheel") and $(basename "$work"/dist/*.tar.gz)"

"$python" -m venv "$work/venv"
"$work/venv/bin/python" -m pip install -q --upgrade pip
"$work/venv/bin/python" -m pip install -q "${wheel}[miniwob,ubuntu]"

cd "$work"   # never import the checkout
export HUD_GYM_HOME="$work/home"
"$work/venv/bin/python" -c "import hud_gym, hud_gym.agents, hud_gym.controllers.browser, hud_gym.wrappers.vector; print('imported', hud_gym.__file__)"
"$work/venv/bin/hud-gym" doctor
"$work/venv/bin/python" -m hud_gym.demo qa
"$work/venv/bin/hud-gym" run miniwob --agent scripted --task click-test,enter-text --group-size 1 --envs 2 --seed 0
"$work/venv/bin/python" - <<'PY'
import hud_gym
job = hud_gym.list_jobs()[0]
analytics = job.get_analytics()
assert analytics.success_rate == 1.0 and analytics.errors == 0, f"the MiniWoB run from the wheel did not succeed: {analytics}"
print(f"job {job.id[:8]}: {analytics.success_rate:.0%} success")
PY
echo "wheel smoke test passed"
