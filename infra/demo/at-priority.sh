#!/usr/bin/env bash
# at-priority.sh NICE COMMAND [ARGS...]: runs COMMAND at nice NICE, as `nice -n NICE` does, and gives the session it
# leads the same priority. Start it in a session of its own: `setsid at-priority.sh -20 java ...`.
#
# Where the kernel schedules sessions as groups (/proc/sys/kernel/sched_autogroup_enabled = 1, the default of Debian's
# and Ubuntu's kernels and of our machines), a nice value only orders the processes of one session: each session gets
# an equal share of the cores whatever its processes' nice values. Measured here on one core: a nice -20 busy loop in its
# own session got 48.5 % against a nice 0 one in another, 92.8 % once its session's group was at -20 too
# (/proc/<pid>/autogroup). Python's counterpart: benchtrail_runner.process.session_priority.
set -euo pipefail
nice_value="$1"; shift
read -r -a stat < /proc/$$/stat
if [ "${stat[5]}" = "$$" ]; then   # the session's leader: the group is this session's alone, never the caller's
    echo "$nice_value" 2>/dev/null > /proc/self/autogroup || true   # no group scheduling, or not allowed: nice alone
fi
exec nice -n "$nice_value" "$@"
