# shellcheck shell=bash
# The busybox of the tiny template: a static busybox >= 1.36 at PREFIX/busybox (default
# /opt/stasis/busybox), from Debian trixie's busybox-static. Bookworm's 1.35 crashes in `wget -T`
# (SIGSEGV on every URL once a timeout is given, also against a local httpd), and tiny has no other
# HTTP client. The host's own /bin/busybox is left alone (CRIU's check and the tests use it).
# A verified install is stamped (PREFIX/.verified = the version).

BUSYBOX_MIN_VERSION=1.36
BUSYBOX_PREFIX=${STASIS_BUSYBOX_PREFIX:-/opt/stasis/busybox}
BUSYBOX_SUITE=${STASIS_BUSYBOX_SUITE:-trixie}

# busybox_version_of BIN: "1.37.0", or fails when BIN does not run.
busybox_version_of() {
    local out
    out=$("$1" 2>/dev/null | head -n 1) || true
    [[ $out =~ ^BusyBox\ v([0-9][0-9.]*) ]] || return 1
    printf '%s\n' "${BASH_REMATCH[1]}"
}

busybox_step() {
    local bin=$BUSYBOX_PREFIX/busybox version log work deb found start=${EPOCHREALTIME//[!0-9]/}
    if [[ -x $bin && -r $BUSYBOX_PREFIX/.verified ]]; then
        version=$(busybox_version_of "$bin" || true)
        if [[ -n $version && $version == "$(head -n 1 -- "$BUSYBOX_PREFIX/.verified")" ]]; then
            say "busybox: ok (cached, $version at $bin)"
            return 0
        fi
    fi
    require_root "installing busybox into $BUSYBOX_PREFIX"
    lock_acquire /run/lock/stasis-setup.lock setup
    log=$(setup_log_dir)/busybox.log
    mkdir -p -- "$(dirname -- "$log")"
    say "busybox: installing Debian $BUSYBOX_SUITE's busybox-static into $BUSYBOX_PREFIX (log: $log)"
    work=$(mktemp -d /var/tmp/stasis-busybox.XXXXXX)
    CLEANUP_PATHS+=("$work")
    private_suite "$BUSYBOX_SUITE" "$work/apt" "$log" busybox
    mkdir -p -- "$work/debs" "$work/root"
    run_logged "busybox: downloading busybox-static" "$log" in_dir "$work/debs" apt-get "${PRIVATE_APT[@]}" download busybox-static ||
        die "apt-get download busybox-static ($BUSYBOX_SUITE) failed (see $log)"
    deb=$(compgen -G "$work/debs/busybox-static_*.deb" | head -n 1) || true
    [[ -n $deb ]] || die "busybox-static's .deb was not downloaded (see $log)"
    dpkg-deb -x "$deb" "$work/root" || die "cannot unpack $deb"
    for found in "$work/root/usr/bin/busybox" "$work/root/bin/busybox"; do [[ -x $found ]] && break; done
    [[ -x $found ]] || die "$deb holds no bin/busybox"
    version=$(busybox_version_of "$found" || true)
    [[ -n $version ]] && version_ge "$version" "$BUSYBOX_MIN_VERSION" ||
        die "Debian $BUSYBOX_SUITE's busybox is ${version:-not runnable}, older than $BUSYBOX_MIN_VERSION"
    busybox_verify "$found" "$work" "$log" || die "the busybox $version of Debian $BUSYBOX_SUITE failed verification (see $log)"
    mkdir -p -- "$BUSYBOX_PREFIX"
    cp -- "$found" "$BUSYBOX_PREFIX/.busybox.new.$$"
    chmod 0755 "$BUSYBOX_PREFIX/.busybox.new.$$"
    mv -f -- "$BUSYBOX_PREFIX/.busybox.new.$$" "$bin"
    printf '%s\n' "$version" >"$BUSYBOX_PREFIX/.verified.tmp"
    mv -f -- "$BUSYBOX_PREFIX/.verified.tmp" "$BUSYBOX_PREFIX/.verified"
    rm -rf -- "$work"
    say "busybox: ok ($version at $bin, installed and verified in $(elapsed "$start"))"
}

BUSYBOX_VERIFY_PID=""

# busybox_verify BIN WORK LOG: BIN runs alone in an empty root (static), and its wget, with a
# timeout, fetches a page from its own httpd and reports a refused connection as exit 1.
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
