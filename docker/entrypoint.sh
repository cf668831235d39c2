#!/usr/bin/env bash
# Entrypoint of the hud-gym controller images (docker/browser, docker/qa, docker/ubuntu), run by
# tini as PID 1: checks that a controller server has its token, then runs the command (CMD).
#
# The images serve with `hud-gym serve GYM --host 0.0.0.0`, reachable by whoever reaches the
# published port, so the token is mandatory here: pass it as $HUD_GYM_SERVER_TOKEN
# (`docker run -e HUD_GYM_SERVER_TOKEN=...`; docker/compose.yaml sets it from $HUD_GYM_TOKEN), or
# as a file (`--token-file /run/secrets/...`). Never `--token`: the server refuses a token on its
# command line. It is never baked into an image. Any other command (a shell, python) runs unchanged.
set -euo pipefail

token_var=HUD_GYM_SERVER_TOKEN

serves() {
  # `hud-gym serve ...` or `python -m hud_gym.controllers.remote.server ...` (what controller="docker" runs)
  [[ $# -ge 2 && "$(basename -- "$1")" == "hud-gym" && "$2" == "serve" ]] && return 0
  [[ $# -ge 3 && "$(basename -- "$1")" == python* && "$2" == "-m" && "$3" == "hud_gym.controllers.remote.server" ]]
}

has_token_file() {
  local arg
  for arg in "$@"; do
    [[ "$arg" == "--token-file" || "$arg" == --token-file=?* ]] && return 0
  done
  return 1
}

if [[ $# -eq 0 ]]; then
  echo "hud-gym entrypoint: no command given" >&2
  exit 64
fi

if serves "$@" && [[ -z "${!token_var:-}" ]] && ! has_token_file "$@"; then
  echo "hud-gym: the controller server needs a token: set $token_var (docker run -e $token_var=...," \
       "or HUD_GYM_TOKEN for docker/compose.yaml), or pass --token-file FILE." \
       "Clients present it as controller_token=..." >&2
  exit 64
fi

exec "$@"
