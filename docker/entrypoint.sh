#!/bin/sh
# The container's entrypoint: runs the `agentpost` command with the container's arguments (default `serve`), as
# process 1 through `exec`, so that `docker stop` (SIGTERM) reaches the service and it shuts down gracefully.
# Options alone (`--roles smtp`, `--version`) go to `serve`, as `agentpost` itself would take them; a command
# (`keys create`, `doctor`, `mcp`) runs as given. AGENTPOST_CLI names the command's script (tests use the checkout's).
set -eu
cli="${AGENTPOST_CLI:-/app/dist/server/cli.js}"
if [ "$#" -eq 0 ]; then
  set -- serve
fi
case "$1" in
  --version | -v | --help | -h) ;;
  -*) set -- serve "$@" ;;
esac
# A file database lives in the volume: its folder must exist (a libSQL server URL needs nothing here).
case "${AGENTPOST_DATABASE_URL:-}" in
  file:*)
    path="${AGENTPOST_DATABASE_URL#file:}"
    mkdir -p "$(dirname "$path")"
    ;;
esac
exec node "$cli" "$@"
