#!/usr/bin/env bash
# Follow the CLI: install Claude Code version V into a scratch folder, list the attachment
# kinds its resume path renders that differ from 2.1.332's, replay every made case with it,
# and (with DIFF=1) run the differential tester against it, sessiondb resuming as V
# (`--cli-version V`). Prints what changed.
#   bash tools/difftest/follow.sh 2.1.336 [SCRATCH]
# 2.1.332 comes from @anthropic-ai/claude-code; 2.1.333-2.1.336 only from the linux-x64
# platform package. Needs npm, python3 and the oracle harness in ../shared.
set -euo pipefail
V=${1:?version}
S=${2:-${TMPDIR:-/tmp}/follow-cli}
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$S/$V" "$S/2.1.332"
if [ ! -x "$S/2.1.332/node_modules/@anthropic-ai/claude-code/bin/claude.exe" ]; then
  npm install --silent --prefix "$S/2.1.332" @anthropic-ai/claude-code@2.1.332 >/dev/null
fi
old="$S/2.1.332/node_modules/@anthropic-ai/claude-code/bin/claude.exe"
case "$V" in
  2.1.332) bin=$old ;;
  *) npm install --silent --prefix "$S/$V" "@anthropic-ai/claude-code-linux-x64@$V" >/dev/null
     bin="$S/$V/node_modules/@anthropic-ai/claude-code-linux-x64/claude" ;;
esac
"$bin" --version
python3 "$here/carve.py" "$old" "$S/2.1.332.js"
python3 "$here/carve.py" "$bin" "$S/$V.js"
echo "== attachment kinds that differ from 2.1.332"
python3 "$here/kinds.py" "$S/$V.js" --old "$S/2.1.332.js"
echo "== made cases replayed with $V"
CLAUDE_BIN="$bin" CLAUDE_VERSION="$V" python3 "$here/recheck.py" -j 1
if [ "${DIFF:-0}" = 1 ]; then
  echo "== differential run against $V"
  CLAUDE_BIN="$bin" python3 "$here/difftest.py" --sessiondb "${SESSIONDB:-target/debug/sessiondb}" \
    -n "${N:-500}" -j 2 --out "$S/difftest-$V" --cli-version "$V"
fi
