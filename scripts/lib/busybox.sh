# shellcheck shell=bash
# The busybox of the tiny template: a static busybox at PREFIX/busybox (default
# /opt/stasis/busybox), built from Debian trixie's busybox source package (1.37) with Debian's
# own patches and static configuration, plus one patch of ours (busybox-sleep-on-eintr.patch).
# - Bookworm's 1.35 crashes (SIGSEGV) in `wget -T`, on every URL, and tiny has no other HTTP client.
# - Trixie's own 1.37 binary fixes wget, but its sleep ends at the first EINTR, and CRIU resumes a
#   sleeping call with EINTR: every `sleep` running in tiny would end early at a hibernate,
#   checkpoint restore or fork. Our patch makes it sleep on (sleep runs as a process of its own in
#   this configuration, so no signal handler's EINTR is lost: Ctrl-C and kill still end it).
# The build takes ~1.5 min on 2 cores, once; the result is checked (static, wget, sleep across a
# CRIU dump and restore) before it is published, and stamped (PREFIX/.verified = BUSYBOX_BUILD).
# The host's /bin/busybox (busybox-static) is left alone: CRIU's check and the tests use it.

BUSYBOX_PREFIX=${STASIS_BUSYBOX_PREFIX:-/opt/stasis/busybox}
BUSYBOX_SUITE=${STASIS_BUSYBOX_SUITE:-trixie}
BUSYBOX_PATCH=$STASIS_ROOT/scripts/lib/busybox-sleep-on-eintr.patch
BUSYBOX_BUILD=stasis-2 # bump when the build or the patch changes: installs are then rebuilt

# busybox_version_of BIN: "1.37.0", or fails when BIN does not run.
busybox_version_of() {
    local out
    out=$("$1" 2>/dev/null | head -n 1) || true
    [[ $out =~ ^BusyBox\ v([0-9][0-9.]*) ]] || return 1
    printf '%s\n' "${BASH_REMATCH[1]}"
}

busybox_step() {
    local bin=$BUSYBOX_PREFIX/busybox version log work src start=${EPOCHREALTIME//[!0-9]/}
    if [[ -x $bin && -r $BUSYBOX_PREFIX/.verified ]]; then
        version=$(busybox_version_of "$bin" || true)
        if [[ -n $version && "$version $BUSYBOX_BUILD" == "$(head -n 1 -- "$BUSYBOX_PREFIX/.verified")" ]]; then
            say "busybox: ok (cached, $version at $bin)"
            return 0
        fi
    fi
    require_root "installing busybox into $BUSYBOX_PREFIX"
    lock_acquire /run/lock/stasis-setup.lock setup
    log=$(setup_log_dir)/busybox.log
    mkdir -p -- "$(dirname -- "$log")"
    say "busybox: building Debian $BUSYBOX_SUITE's busybox with a patch of ours into $BUSYBOX_PREFIX (~1.5 min once; log: $log)"
    work=$(mktemp -d /var/tmp/stasis-busybox.XXXXXX)
    CLEANUP_PATHS+=("$work")
    private_suite "$BUSYBOX_SUITE" "$work/apt" "$log" busybox deb-src
    mkdir -p -- "$work/src"
    run_logged "busybox: downloading the source" "$log" \
        in_dir "$work/src" apt-get "${PRIVATE_APT[@]}" source --download-only busybox ||
        die "apt-get source busybox ($BUSYBOX_SUITE) failed (see $log)"
    src=$(busybox_unpack "$work/src" "$log") || die "cannot unpack busybox's source (see $log)"
    run_logged "busybox: make" "$log" busybox_make "$src" ||
        die "building busybox failed (see $log)"
    version=$(busybox_version_of "$src/busybox" || true)
    [[ -n $version ]] || die "the busybox built does not run (see $log)"
    busybox_verify "$src/busybox" "$work" "$log" || die "the busybox $version built failed verification (see $log)"
    mkdir -p -- "$BUSYBOX_PREFIX"
    cp -- "$src/busybox" "$BUSYBOX_PREFIX/.busybox.new.$$"
    chmod 0755 "$BUSYBOX_PREFIX/.busybox.new.$$"
    mv -f -- "$BUSYBOX_PREFIX/.busybox.new.$$" "$bin"
    printf '%s %s\n' "$version" "$BUSYBOX_BUILD" >"$BUSYBOX_PREFIX/.verified.tmp"
    mv -f -- "$BUSYBOX_PREFIX/.verified.tmp" "$BUSYBOX_PREFIX/.verified"
    rm -rf -- "$work"
    say "busybox: ok ($version at $bin, built and verified in $(elapsed "$start"))"
}

# busybox_unpack DIR LOG: the upstream tarball and Debian's packaging of the downloaded source
# package, Debian's patches applied and ours; prints the source tree's path.
busybox_unpack() {
    local dir=$1 log=$2 orig debian tree patch
    orig=$(compgen -G "$dir/busybox_*.orig.tar.*" | head -n 1) || true
    debian=$(compgen -G "$dir/busybox_*.debian.tar.*" | head -n 1) || true
    [[ -n $orig && -n $debian ]] || { printf 'no orig or debian tarball in %s\n' "$dir" >>"$log"; return 1; }
    tar -xf "$orig" -C "$dir" >>"$log" 2>&1 || return 1
    tree=$(compgen -G "$dir/busybox-*/" | head -n 1) || true
    [[ -n $tree ]] || return 1
    tree=${tree%/}
    tar -xf "$debian" -C "$tree" >>"$log" 2>&1 || return 1
    while IFS= read -r patch; do
        [[ -z $patch || $patch == \#* ]] && continue
        patch -d "$tree" -p1 -s <"$tree/debian/patches/$patch" >>"$log" 2>&1 || { printf 'patch %s failed\n' "$patch" >>"$log"; return 1; }
    done <"$tree/debian/patches/series"
    patch -d "$tree" -p1 -s <"$BUSYBOX_PATCH" >>"$log" 2>&1 || { printf 'our patch failed\n' >>"$log"; return 1; }
    printf '%s\n' "$tree"
}

# busybox_make TREE: Debian's static configuration (no new option asked for), then the binary.
busybox_make() {
    local tree=$1
    cp -- "$tree/debian/config/pkg/static" "$tree/.config" || return 1
    # Any option Debian's configuration does not set takes its default (yes ends with a SIGPIPE).
    { yes '' 2>/dev/null || :; } | make -C "$tree" oldconfig >/dev/null || return 1
    make -C "$tree" -j"$(nproc)" busybox
}

BUSYBOX_VERIFY_PID=""

# busybox_verify BIN WORK LOG: BIN runs alone in an empty root (static); its wget, with a timeout,
# fetches a page from its own httpd and reports a refused connection as exit 1; and its sleep
# sleeps on across a CRIU dump and restore.
busybox_verify() {
    local bin=$1 work=$2 log=$3 rc=0
    mkdir -p -- "$work/empty/bin" "$work/www"
    cp -- "$bin" "$work/empty/bin/busybox"
    if ! chroot "$work/empty" /bin/busybox true >>"$log" 2>&1; then
        say "busybox: $bin does not run without a libc: not a static binary"
        return 1
    fi
    busybox_verify_wget "$bin" "$work" "$log" || rc=$?
    if [[ -n $BUSYBOX_VERIFY_PID ]]; then
        stop_pid "$BUSYBOX_VERIFY_PID"
        forget_pid "$BUSYBOX_VERIFY_PID"
        BUSYBOX_VERIFY_PID=""
    fi
    ((rc == 0)) || return "$rc"
    busybox_verify_sleep "$bin" "$work" "$log" || rc=$?
    if [[ -n $BUSYBOX_VERIFY_PID ]]; then
        stop_pid "$BUSYBOX_VERIFY_PID"
        forget_pid "$BUSYBOX_VERIFY_PID"
        BUSYBOX_VERIFY_PID=""
    fi
    return "$rc"
}

busybox_verify_wget() {
    local bin=$1 work=$2 log=$3 port refused page code
    printf 'stasis busybox check\n' >"$work/www/index.html"
    port=$(free_loopback_port) && refused=$(free_loopback_port) || { say "busybox: no free loopback port"; return 1; }
    "$bin" httpd -f -p "127.0.0.1:$port" -h "$work/www" </dev/null >>"$log" 2>&1 &
    BUSYBOX_VERIFY_PID=$!
    CLEANUP_PIDS+=("$BUSYBOX_VERIFY_PID")
    wait_until 50 port_listening "$port" || { say "busybox: its httpd did not listen on 127.0.0.1:$port"; return 1; }
    page=$("$bin" wget -T 5 -q -O - "http://127.0.0.1:$port/" 2>>"$log") || code=$?
    if [[ $page != "stasis busybox check" ]]; then
        say "busybox: wget -T 5 of its own httpd's page failed (exit ${code:-0})"
        return 1
    fi
    code=0
    "$bin" wget -T 2 -q -O /dev/null "http://127.0.0.1:$refused/" >>"$log" 2>&1 || code=$?
    if ((code != 1)); then
        say "busybox: wget of a refused connection exited $code, not 1"
        return 1
    fi
    printf 'verified: static; wget -T fetched a page and reported a refused connection\n' >>"$log"
}

# A sleep of its own session dumped and restored by CRIU (criu_step ran before) must still sleep.
busybox_verify_sleep() {
    local bin=$1 work=$2 log=$3 criu=$CRIU_PREFIX/criu pid
    mkdir -p -- "$work/img"
    (exec setsid "$bin" sleep 600 </dev/null >/dev/null 2>&1) &
    pid=$!
    disown "$pid"
    BUSYBOX_VERIFY_PID=$pid
    CLEANUP_PIDS+=("$pid")
    wait_until 50 test -e "/proc/$pid" || return 1
    sleep 0.2
    if ! "$criu" dump -t "$pid" -D "$work/img" -o dump.log >>"$log" 2>&1; then
        say "busybox: CRIU could not dump its sleep"
        criu_append_log "$log" "$work/img/dump.log"
        return 1
    fi
    wait_until 50 pid_gone "$pid" || { say "busybox: the dumped sleep $pid is still alive"; return 1; }
    if ! "$criu" restore -d -D "$work/img" -o restore.log >>"$log" 2>&1; then
        say "busybox: CRIU could not restore its sleep"
        criu_append_log "$log" "$work/img/restore.log"
        return 1
    fi
    sleep 0.5
    if pid_ended "$pid"; then
        say "busybox: its sleep ended at the CRIU restore instead of sleeping on"
        return 1
    fi
    printf 'verified: sleep sleeps on across a CRIU dump and restore\n' >>"$log"
}
