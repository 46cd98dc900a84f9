#!/usr/bin/env bash
# The dashboard in a real browser: Debian's headless chromium loads "/" from a
# daemon that has two finished jobs, runs app.js against the live API, and the
# rendered DOM must show both jobs as succeeded and the reason the device list
# is empty; a screenshot must come out as a real image. Chromium missing is a
# failure, not a skip: `make test` installs it (`make web-deps`).
set -euo pipefail
# shellcheck source=tests/integration/lib.sh
source "${REPO:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}/tests/integration/lib.sh"

CHROMIUM=${CHROMIUM:-/usr/bin/chromium}
[ -x "$CHROMIUM" ] || fail "chromium not found at $CHROMIUM: run 'make web-deps' (apt-get install chromium)"

# browse URL ARGS...: headless chromium on URL with the extra arguments given.
# Each run gets its own profile; its stderr (D-Bus noise and the like) is kept
# in a file and shown only when the run fails.
browse() {
    local url=$1 profile rc=0
    shift
    profile=$(mktemp -d "$WORK/chromium-profile.XXXXXX")
    timeout -k 5 60 "$CHROMIUM" --headless --no-sandbox --disable-gpu --disable-quic \
        --no-first-run --disable-background-networking --disable-component-update \
        --disable-sync --disable-dev-shm-usage --user-data-dir="$profile" \
        --virtual-time-budget=5000 "$@" "$url" 2>>"$WORK/chromium.stderr" || rc=$?
    rm -rf "$profile"
    [ "$rc" -eq 0 ] || fail "chromium exited with status $rc on $url; its stderr: $(tail -n 5 "$WORK/chromium.stderr")"
}

# What chromium's serializer writes for a text node: & < > escaped.
html_text() {
    local s=${1//&/&amp;}
    s=${s//</&lt;}
    printf '%s' "${s//>/&gt;}"
}

# shellcheck disable=SC2119 # no extra arguments: the test's db and token file
start_daemon
wait_ready

# Two quick jobs, submitted the way a client would.
ids=()
for echo in first second; do
    submit "{\"kind\":\"test\",\"params\":{\"mode\":\"ok\",\"echo\":\"$echo\"}}"
    ids+=("$JOB_ID")
done
for id in "${ids[@]}"; do wait_job_state "$id" succeeded 30; done

# The device list is empty on a machine without an NVIDIA GPU; the page must
# then say why, in the daemon's own words.
req GET /api/v1/devices
assert_status 200
[ "$(json '.devices | length')" = 0 ] || fail "this test expects a machine without GPUs; got $(last_request)"
reason=$(json .reason)
if [ -z "$reason" ] || [ "$reason" = null ]; then
    fail "an empty device list without a reason: $(last_request)"
fi

browse "$BASE_URL/" --dump-dom >"$WORK/dom.html"
[ -s "$WORK/dom.html" ] || fail "chromium printed no DOM"
dom=$(cat "$WORK/dom.html")

# app.js ran and reached the API: the status line says when it last updated.
status_line=$(grep -o '<p id="status"[^<]*' "$WORK/dom.html" || echo '(no status line)')
[[ "$status_line" == *'>Updated '* ]] || fail "the page did not load the API; status line: $status_line"
# Each job's row: <tr class="job" data-job-id="ID" data-state="succeeded">,
# with its id on the row's toggle button and the state as text in its badge.
for id in "${ids[@]}"; do
    row=$(grep -o "<tr class=\"job\" data-job-id=\"$id\"[^>]*>.*" "$WORK/dom.html" | sed 's#</tr>.*##' || true)
    [ -n "$row" ] || fail "no row for job $id in the rendered DOM (saved in $WORK/dom.html)"
    [[ "$row" == *'data-state="succeeded"'* ]] || fail "job $id's row is not in state succeeded: ${row:0:400}"
    [[ "$row" == *'>succeeded</span>'* ]] || fail "job $id's row shows no 'succeeded' badge: ${row:0:400}"
    [[ "$row" == *">$id</button>"* ]] || fail "job $id's row does not show its id: ${row:0:400}"
done
# The reason for the empty device list, and no device table.
[[ "$dom" == *"$(html_text "$reason")"* ]] || fail "the page does not show the device reason '$reason'"
grep -qE '<table id="devices"[^>]* hidden' "$WORK/dom.html" || fail "the device table is shown although there are no devices"
# The job kinds came in: the test build's "test" kind is in the form.
[[ "$dom" == *'<option value="test">test</option>'* ]] || fail "the kind select does not offer 'test'"

# A link to #job=ID opens that job's row with its parameters, events and result.
browse "$BASE_URL/#job=${ids[0]}" --dump-dom >"$WORK/dom-detail.html"
detail=$(cat "$WORK/dom-detail.html")
[[ "$detail" == *"id=\"job-detail-${ids[0]}\""* ]] || fail "#job=${ids[0]} did not open the job's detail row"
[[ "$detail" == *'"echo": "first"'* ]] || fail "the detail row of job ${ids[0]} does not show its params and result"
[[ "$detail" == *'<table class="events">'* ]] || fail "the detail row of job ${ids[0]} has no events"

# The screenshot: a PNG of the whole 1280x900 window, far bigger than a blank page.
png=$WORK/dash.png
browse "$BASE_URL/" --screenshot="$png" --window-size=1280,900
[ -s "$png" ] || fail "no screenshot written"
[ "$(head -c 8 "$png" | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ] || fail "the screenshot is not a PNG"
size=$(stat -c %s "$png")
[ "$size" -gt 20000 ] || fail "the screenshot is only $size bytes: the page looks blank"

stop_daemon
echo "ok: jobs ${ids[*]} shown as succeeded, device reason shown, screenshot $size bytes"
