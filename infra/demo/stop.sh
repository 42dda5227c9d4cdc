# Sourced by start-java.sh and stop-java.sh: stop one demo process by its recorded PID only
# ($RUN/demo-<name>.pid), TERM first, KILL after 5 s.
stop() {
    local f="$RUN/demo-$1.pid" pid
    [ -f "$f" ] || return 0
    pid=$(cat "$f")
    if kill -0 "$pid" 2>/dev/null; then
        kill -TERM "$pid"
        for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
        kill -0 "$pid" 2>/dev/null && kill -KILL "$pid"
    fi
    rm -f "$f"
}
