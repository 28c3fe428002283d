#!/usr/bin/env bash
# Makes sure Chromium is there for the browser test of the live view (test/integration/live-view.browser.heavy.test.ts).
#
# $OPENMCP_CHROMIUM if set, else Debian's /usr/bin/chromium. If it is missing and apt-get is usable (as root,
# or through passwordless sudo), installs Debian's `chromium` package (plus fonts-liberation, so text renders
# the same everywhere): once per machine, quietly. It never fails: when it cannot install, it says how and
# exits 0, and the browser test then fails with the same advice (a test that needs a browser must not pass
# silently without one).
set -uo pipefail
chromium=${OPENMCP_CHROMIUM:-/usr/bin/chromium}
[ -x "$chromium" ] && exit 0

advice="install Chromium (Debian/Ubuntu: 'sudo apt-get install -y chromium') or set OPENMCP_CHROMIUM to a Chromium executable"
if [ -n "${OPENMCP_CHROMIUM:-}" ]; then
  echo "ensure-chromium.sh: OPENMCP_CHROMIUM=$chromium is not an executable; $advice" >&2; exit 0
fi
if ! command -v apt-get >/dev/null 2>&1; then
  echo "ensure-chromium.sh: no $chromium and no apt-get here; $advice" >&2; exit 0
fi
sudo=()
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then sudo=(sudo -n); else
    echo "ensure-chromium.sh: no $chromium, and installing it needs root; $advice" >&2; exit 0
  fi
fi

echo "ensure-chromium.sh: installing Debian's chromium for the live view's browser test (once per machine)" >&2
log=$(mktemp)
apt_install() {
  "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q -o DPkg::Lock::Timeout=300 \
    chromium fonts-liberation >>"$log" 2>&1
}
# Package lists may be missing (fresh images) or stale: update once, only if the first try fails.
if apt_install || { "${sudo[@]}" apt-get update -q -o DPkg::Lock::Timeout=300 >>"$log" 2>&1 && apt_install; }; then
  [ -x "$chromium" ] && { echo "ensure-chromium.sh: $("$chromium" --version 2>/dev/null)" >&2; rm -f "$log"; exit 0; }
fi
echo "ensure-chromium.sh: could not install chromium with apt-get; $advice. apt-get said:" >&2
tail -n 15 "$log" >&2
rm -f "$log"
exit 0
