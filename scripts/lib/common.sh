# shellcheck shell=bash
# Shared helpers of ./stasis: messages, progress of long steps, log files, locks, cleanup.
# Sourced by ./stasis after it set STASIS_ROOT; defines functions and a few globals only.

STASIS_TAG='[stasis]'

# Every message of the launcher goes to stderr: stdout belongs to the program it execs
# (the CLI's output may be piped into jq).
say() { printf '%s %s\n' "$STASIS_TAG" "$*" >&2; }
die() {
    printf '%s error: %s\n' "$STASIS_TAG" "$*" >&2
    exit 1
}

is_root() { [[ $EUID -eq 0 ]]; }

# require_root WHAT: installs (apt, /opt) and the root integration tests need root.
require_root() {
    is_root || die "$1 needs root (apt packages, CRIU in /opt, runc, btrfs): run it as root, e.g. sudo ./stasis ${STASIS_COMMAND:-setup}"
}

# A start time for `elapsed`: microseconds since the epoch, without forking.
# Usage: local start=${EPOCHREALTIME//[!0-9]/}
# elapsed START: time since START, as "0.4s", "12s" or "2m05s".
elapsed() {
    local ms=$(((${EPOCHREALTIME//[!0-9]/} - $1) / 1000)) s
    s=$((ms / 1000))
    if ((s >= 60)); then
        printf '%dm%02ds' $((s / 60)) $((s % 60))
    elif ((s >= 10)); then
        printf '%ds' "$s"
    else
        printf '%d.%ds' "$s" $((ms % 1000 / 100))
    fi
}

# version_ge A B: true when version A >= version B (dpkg-style dotted numbers).
version_ge() {
    [[ "$(printf '%s\n%s\n' "$1" "$2" | sort -V | head -n 1)" == "$2" ]]
}

# ---- cleanup: temp dirs and processes this run created, removed on any exit ----------------
CLEANUP_PATHS=()
CLEANUP_PIDS=()
CLEANUP_HOOKS=() # functions run first, e.g. to put back what an interrupted install moved aside
TICKER_PID=""

# pid_ended PID: gone, or a zombie (an orphan waits for pid 1, which here reaps every ~2 s).
pid_ended() {
    local stat
    stat=$(cat "/proc/$1/stat" 2>/dev/null) || return 0
    stat=${stat##*) }
    [[ ${stat:0:1} == Z ]]
}

# stop_pid PID: TERM, then KILL after ~3 s; returns once PID has ended (or after ~5 s).
stop_pid() {
    local pid=$1 i
    kill -TERM "$pid" 2>/dev/null || return 0
    for ((i = 0; i < 50; i++)); do
        pid_ended "$pid" && return 0
        if ((i == 30)); then kill -KILL "$pid" 2>/dev/null || true; fi
        sleep 0.1
    done
}

cleanup_now() {
    local pid path hook
    ticker_stop
    for hook in "${CLEANUP_HOOKS[@]}"; do "$hook" || true; done
    for pid in "${CLEANUP_PIDS[@]}"; do stop_pid "$pid"; done
    for path in "${CLEANUP_PATHS[@]}"; do rm -rf -- "$path"; done
    CLEANUP_PIDS=()
    CLEANUP_PATHS=()
}

# Forget a pid once it has been stopped, so the exit trap does not signal a recycled pid.
forget_pid() {
    local keep=() pid
    for pid in "${CLEANUP_PIDS[@]}"; do [[ $pid == "$1" ]] || keep+=("$pid"); done
    CLEANUP_PIDS=("${keep[@]}")
}

trap cleanup_now EXIT
trap 'ticker_stop; say "interrupted"; exit 130' INT
trap 'ticker_stop; say "terminated"; exit 143' TERM

# ---- waiting for things ------------------------------------------------------------------------
port_listening() { [[ -n $(ss -Hltn "sport = :$1" 2>/dev/null) ]]; }
pid_gone() { [[ ! -e /proc/$1 ]]; }

# wait_until TENTHS CMD...: polls CMD every 0.1 s, at most TENTHS times.
wait_until() {
    local tries=$1 i
    shift
    for ((i = 0; i < tries; i++)); do
        "$@" && return 0
        sleep 0.1
    done
    return 1
}

free_loopback_port() {
    local port i
    for ((i = 0; i < 50; i++)); do
        port=$((20000 + RANDOM % 40000))
        port_listening "$port" || { printf '%s\n' "$port"; return 0; }
    done
    return 1
}

# ---- logs -------------------------------------------------------------------------------------
# Setup logs live in /var/log/stasis (installs run as root); build logs in .build/logs.
setup_log_dir() {
    if is_root; then printf '/var/log/stasis'; else printf '%s/.build/logs' "$STASIS_ROOT"; fi
}

# print_log_tail LOG [N]: the end of a log, indented, on stderr.
print_log_tail() {
    local log=$1 n=${2:-40}
    [[ -s $log ]] || return 0
    printf '%s --- last %d lines of %s ---\n' "$STASIS_TAG" "$n" "$log" >&2
    tail -n "$n" -- "$log" | sed 's/^/    /' >&2
}

# ---- progress of long steps ------------------------------------------------------------------
# On a terminal: one line rewritten every second with the elapsed time. Elsewhere (CI logs): a
# heartbeat line every 30 s with the last line of the step's log.
ticker_start() {
    local label=$1 log=$2 start=${EPOCHREALTIME//[!0-9]/} parent=$$
    (
        # Only 1 s sleeps: nothing of the ticker outlives ticker_stop by more than a second (a
        # leftover `sleep 30` would hold a CI log pipe open).
        local n=0
        while kill -0 "$parent" 2>/dev/null; do
            if [[ -t 2 ]]; then
                printf '\r\033[K%s %s ... %s' "$STASIS_TAG" "$label" "$(elapsed "$start")" >&2
            elif ((n > 0 && n % 30 == 0)); then
                printf '%s %s ... still running (%s): %s\n' "$STASIS_TAG" "$label" "$(elapsed "$start")" \
                    "$(tail -n 1 -- "$log" 2>/dev/null | cut -c1-120)" >&2
            fi
            sleep 1 >/dev/null 2>&1
            n=$((n + 1))
        done
    ) &
    TICKER_PID=$!
}

ticker_stop() {
    [[ -n $TICKER_PID ]] || return 0
    kill "$TICKER_PID" 2>/dev/null || true
    wait "$TICKER_PID" 2>/dev/null || true
    TICKER_PID=""
    [[ -t 2 ]] && printf '\r\033[K' >&2
    return 0
}

# redact_hosts: a filter that blanks the host of every URL (apt and Maven print their repository
# URLs; no registry host name is written into any file of ours).
redact_hosts() { sed -u -E 's#([a-z]+://)[^/[:space:]"]+#\1<host>#g'; }

# run_logged LABEL LOG CMD...: runs CMD in the foreground (Ctrl-C reaches it) with its output
# appended to LOG, showing progress. On failure prints the log's tail; returns CMD's status
# (pipefail: the filter itself does not fail).
run_logged() {
    local label=$1 log=$2 rc=0 start=${EPOCHREALTIME//[!0-9]/}
    shift 2
    mkdir -p -- "$(dirname -- "$log")"
    printf '==== %s %s\n' "$(date '+%F %T')" "$label" >>"$log"
    ticker_start "$label" "$log"
    "$@" 2>&1 </dev/null | redact_hosts >>"$log" || rc=$?
    ticker_stop
    if ((rc != 0)); then
        say "$label: FAILED (exit $rc after $(elapsed "$start")); full log: $log"
        print_log_tail "$log"
    fi
    return "$rc"
}

# in_dir DIR CMD...: CMD run inside DIR (for tools that write to the current directory).
in_dir() {
    local dir=$1
    shift
    (cd -- "$dir" && "$@")
}

# ---- locks -------------------------------------------------------------------------------------
# Setup and build steps hold exclusive flocks so that two launchers never install or build at the
# same time. The locks are held by one small holder process (a coprocess), never by a file
# descriptor of the launcher itself:
# - no child can inherit a lock: apt, dpkg, Maven and the exec'd server get no lock fd at all, and
#   the holder's pipe is close-on-exec (bash closes coprocess fds in subshells and on exec);
# - locks are re-entrant by path: a step asking again for a lock this launcher holds goes on (the
#   apt and CRIU steps share one lock; a fresh machine needs both);
# - the holder ends when the launcher closes its pipe, on exit, on exec and on SIGKILL alike, so a
#   dead launcher never leaves a lock behind.
declare -A LOCK_HELD=() # canonical path of each lock held -> 1
LOCK_HOLDER_PID=""

# lock_holder: the coprocess. Reads one lock path per line, answers "held" at once or "waiting"
# then "held"; ends (dropping every lock) when its input closes.
lock_holder() {
    local file fd
    trap - EXIT INT TERM
    while IFS= read -r file; do
        exec {fd}>>"$file" || { printf 'failed\n'; continue; }
        if ! flock -n "$fd"; then
            printf 'waiting\n'
            flock "$fd" || { printf 'failed\n'; continue; }
        fi
        printf 'held\n'
    done
}

# lock_acquire FILE WHAT: an exclusive lock on FILE until the launcher exits (or lock_release_all).
# Says once that it waits when another launcher holds it; a lock already held goes on at once.
lock_acquire() {
    local file=$1 what=$2 reply
    mkdir -p -- "$(dirname -- "$file")"
    file=$(readlink -f -- "$file")
    [[ -n ${LOCK_HELD[$file]:-} ]] && return 0
    if [[ -z $LOCK_HOLDER_PID ]]; then
        coproc LOCK_PIPE { lock_holder; }
        LOCK_HOLDER_PID=$LOCK_PIPE_PID
    fi
    printf '%s\n' "$file" >&"${LOCK_PIPE[1]}"
    IFS= read -r reply <&"${LOCK_PIPE[0]}" || reply=failed
    if [[ $reply == waiting ]]; then
        say "waiting for another ./stasis to finish the $what (lock $file)"
        IFS= read -r reply <&"${LOCK_PIPE[0]}" || reply=failed
    fi
    [[ $reply == held ]] || die "cannot take the $what lock $file"
    LOCK_HELD[$file]=1
}

# lock_release_all: drops every lock (the holder ends once its input closes) and waits until they
# are free, so that whatever runs next (another launcher, the exec'd server) finds them free.
lock_release_all() {
    [[ -n $LOCK_HOLDER_PID ]] || return 0
    local pid=$LOCK_HOLDER_PID w=${LOCK_PIPE[1]:-} r=${LOCK_PIPE[0]:-}
    [[ -z $w ]] || exec {w}>&-
    [[ -z $r ]] || exec {r}<&-
    wait "$pid" 2>/dev/null || true
    LOCK_HOLDER_PID=""
    LOCK_HELD=()
}
