#!/usr/bin/env bash
# Debian's Chromium as Playwright starts it for the e2e suite and `make bench-ui`, without the browser's own omnibox
# popup. Each browser context Playwright opens is a window of its own, and Chromium 156 loads that window's omnibox
# popup (chrome://omnibox-popup.top-chrome, twice) in a renderer of its own, though nothing ever types in it: 44 such
# renderers in one `make test`. With WebUIOmniboxPopup and WebUIOmniboxAimPopup off there are none, and the
# Playwright suite alone (`make test-e2e`, 2026-12-02) took 118 CPU-seconds instead of 128.
#
# Chromium reads only the last --disable-features on its command line, so these features join the list Playwright
# passes (its own, which must stay) in one switch instead of following it in a second.
set -euo pipefail

features=() args=()
for arg in "$@"; do
    case "$arg" in
        --disable-features=*) IFS=, read -r -a listed <<< "${arg#--disable-features=}"; features+=("${listed[@]}") ;;
        *) args+=("$arg") ;;
    esac
done
features+=(WebUIOmniboxPopup WebUIOmniboxAimPopup)
exec "${BENCHTRAIL_CHROMIUM_BINARY:-/usr/bin/chromium}" "${args[@]}" "--disable-features=$(IFS=,; echo "${features[*]}")"
