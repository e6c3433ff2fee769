# shellcheck shell=bash
# gVisor's runsc at PREFIX/runsc (default /opt/stasis/runsc), the engine of the gvisor runtime
# (docs/HOST.md). runsc is one static Go binary, so it is unpacked from Debian's .deb with private
# apt state (the host's apt state is never touched) and needs no library of the host:
# - bookworm's own runsc (2022) is worse than the 2024 build on every lifecycle operation measured
#   here, so the build comes from bookworm-backports (2024-07 at the time of writing);
# - the systrap platform is the one used: /dev/kvm on these hosts is PVM, on which runsc's KVM
#   platform hangs.
# The install is verified by running a real sandbox (a static busybox printing a word, with no
# network), then stamped (PREFIX/.verified = `runsc --version`'s first line); later runs compare
# the stamp with the binary's answer.

RUNSC_PREFIX=${STASIS_RUNSC_PREFIX:-/opt/stasis/runsc}
RUNSC_SUITE=${STASIS_RUNSC_SUITE:-bookworm-backports}
RUNSC_MIN_RELEASE=20240729 # the date in "runsc version 0.0~20240729.0"
RUNSC_PLATFORM=systrap

# runsc_version_line BIN: the first line of `runsc --version` (read whole: with pipefail, a `head`
# closing the pipe early would fail the call).
runsc_version_line() {
    local out
    out=$("$1" --version 2>/dev/null) || return 1
    printf '%s\n' "${out%%$'\n'*}"
}

# runsc_release_in LINE: "20240729" from a version line, or fails when LINE is not runsc's.
runsc_release_in() {
    [[ $1 =~ ^runsc\ version\ .*([0-9]{8}) ]] || return 1
    printf '%s\n' "${BASH_REMATCH[1]}"
}

# runsc_release_of BIN: "20240729", or fails when BIN does not run or is not runsc.
runsc_release_of() {
    local line
    line=$(runsc_version_line "$1") || return 1
    runsc_release_in "$line"
}

runsc_step() {
    local bin=$RUNSC_PREFIX/runsc release line log work deb start=${EPOCHREALTIME//[!0-9]/}
    if [[ -x $bin && -r $RUNSC_PREFIX/.verified ]]; then
        line=$(runsc_version_line "$bin" || true)
        release=$(runsc_release_in "$line" || true)
        if [[ -n $release && $line == "$(head -n 1 -- "$RUNSC_PREFIX/.verified")" ]]; then
            say "runsc: ok (cached, $release at $bin)"
            return 0
        fi
    fi
    require_root "installing runsc into $RUNSC_PREFIX"
    lock_acquire /run/lock/stasis-setup.lock setup
    log=$(setup_log_dir)/runsc.log
    mkdir -p -- "$(dirname -- "$log")"
    say "runsc: installing gVisor's runsc from Debian $RUNSC_SUITE into $RUNSC_PREFIX (log: $log)"
    work=$(mktemp -d /var/tmp/stasis-runsc.XXXXXX)
    CLEANUP_PATHS+=("$work")
    private_suite "$RUNSC_SUITE" "$work/apt" "$log" runsc
    mkdir -p -- "$work/debs" "$work/root"
    run_logged "runsc: downloading the package" "$log" \
        in_dir "$work/debs" apt-get "${PRIVATE_APT[@]}" download runsc ||
        die "apt-get download runsc ($RUNSC_SUITE) failed (see $log)"
    deb=$(compgen -G "$work/debs/runsc_*.deb" | head -n 1) || true
    [[ -n $deb ]] || die "runsc's .deb was not downloaded (see $log)"
    dpkg-deb -x "$deb" "$work/root" || die "cannot unpack $deb"
    release=$(runsc_release_of "$work/root/usr/bin/runsc" || true)
    [[ -n $release ]] || die "the runsc of Debian $RUNSC_SUITE does not run (see $log)"
    ((release >= RUNSC_MIN_RELEASE)) ||
        die "Debian $RUNSC_SUITE carries runsc $release, older than $RUNSC_MIN_RELEASE"
    local verified=1
    if ! unshare --user true 2>/dev/null; then
        # runsc's file server makes a user namespace, which the kernel refuses here (to a chrooted
        # process, as in the fresh-machine test, or where they are turned off): no sandbox can run,
        # so the install is left unstamped and checked again by the next run.
        verified=0
    else
        runsc_verify "$work/root/usr/bin/runsc" "$work" "$log" || die "runsc $release failed verification (see $log)"
    fi
    mkdir -p -- "$RUNSC_PREFIX"
    cp -- "$work/root/usr/bin/runsc" "$RUNSC_PREFIX/.runsc.new.$$"
    chmod 0755 "$RUNSC_PREFIX/.runsc.new.$$"
    mv -f -- "$RUNSC_PREFIX/.runsc.new.$$" "$bin"
    rm -rf -- "$work"
    if ((verified == 0)); then
        rm -f -- "$RUNSC_PREFIX/.verified"
        say "runsc: installed, not verified ($release at $bin: the kernel refuses this process the user namespace runsc needs, as in a chroot; no gVisor sandbox can run here)"
        return 0
    fi
    runsc_version_line "$bin" >"$RUNSC_PREFIX/.verified.tmp"
    mv -f -- "$RUNSC_PREFIX/.verified.tmp" "$RUNSC_PREFIX/.verified"
    say "runsc: ok ($release at $bin, installed and verified in $(elapsed "$start"))"
}


# runsc_verify BIN WORK LOG: a sandbox of the host's static busybox, no network, no cgroups of its
# own, must print the word it is given; its state directory is removed afterwards.
runsc_verify() {
    local bin=$1 bundle=$2/verify state=$2/verify-state word=stasis-runsc-ok out rc=0
    mkdir -p -- "$bundle/rootfs/bin" "$state"
    cp -- /bin/busybox "$bundle/rootfs/bin/busybox" || { printf 'no /bin/busybox (busybox-static)\n' >>"$3"; return 1; }
    (cd "$bundle" && "$bin" spec -- /bin/busybox echo "$word") >>"$3" 2>&1 || return 1
    jq '.process.terminal = false' "$bundle/config.json" >"$bundle/config.json.new" && mv -f -- "$bundle/config.json.new" "$bundle/config.json"
    out=$(timeout -k 5 60 "$bin" --root="$state" --platform="$RUNSC_PLATFORM" --network=none --ignore-cgroups \
        run --bundle "$bundle" "stasis-verify-$$" </dev/null 2>>"$3") || rc=$?
    "$bin" --root="$state" delete --force "stasis-verify-$$" >/dev/null 2>&1 || true
    printf 'verify: exit %s, output %q\n' "$rc" "$out" >>"$3"
    [[ $rc -eq 0 && $out == "$word" ]]
}
