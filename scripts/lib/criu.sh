# shellcheck shell=bash
# CRIU >= 4.2 in a private prefix (default /opt/stasis/criu: binary PREFIX/criu, libraries
# PREFIX/lib), as docs/HOST.md describes:
# - bookworm's criu 3.17 dies on this kernel's vDSO layout, trixie's 4.1 cannot dump TCP sockets
#   on kernels >= 6.16: 4.2 is the floor, and the bookworm package is never relied on;
# - if the distribution's /usr/sbin/criu is >= 4.2 and passes `criu check`, PREFIX/criu links to it;
# - else CRIU and its library closure come from Debian testing, unpacked with private apt state
#   (the host's apt state and libc are never touched) and patched to load only PREFIX/lib.
# A verified install is stamped (PREFIX/.verified = the version); later runs only compare it with
# `criu --version`.

CRIU_MIN_VERSION=4.2
CRIU_PREFIX=${STASIS_CRIU_PREFIX:-/opt/stasis/criu}
CRIU_SUITE=${STASIS_CRIU_SUITE:-forky}
CRIU_DIST_BIN=/usr/sbin/criu

# criu_version_of BIN: "4.2.1", or fails when BIN does not run.
criu_version_of() {
    local out
    out=$("$1" --version 2>/dev/null) || return 1
    out=$(sed -n 's/^Version:[[:space:]]*\([0-9][0-9.]*\).*/\1/p' <<<"$out" | head -n 1)
    [[ -n $out ]] && printf '%s\n' "$out"
}

criu_step() {
    local bin=$CRIU_PREFIX/criu version stamp="" log start=${EPOCHREALTIME//[!0-9]/} dist_version="" check
    if [[ -x $bin && -r $CRIU_PREFIX/.verified ]]; then
        stamp=$(head -n 1 -- "$CRIU_PREFIX/.verified")
        version=$(criu_version_of "$bin" || true)
        if [[ -n $version && $version == "$stamp" ]] && version_ge "$version" "$CRIU_MIN_VERSION"; then
            say "criu: ok (cached, $version at $bin)"
            return 0
        fi
    fi
    require_root "installing CRIU into $CRIU_PREFIX"
    lock_acquire /run/lock/stasis-setup.lock setup
    log=$(setup_log_dir)/criu.log
    mkdir -p -- "$(dirname -- "$log")"

    # An install whose stamp is missing or stale (e.g. an interrupted run, or the distribution's
    # criu was upgraded): verify what is there before replacing it.
    version=$(criu_version_of "$bin" || true)
    if [[ -n $version ]] && version_ge "$version" "$CRIU_MIN_VERSION"; then
        say "criu: verifying the existing $version at $bin"
        if criu_verify "$bin" "$log"; then
            criu_stamp "$version"
            say "criu: ok ($version at $bin, verified in $(elapsed "$start"))"
            return 0
        fi
        say "criu: the existing $bin failed verification; reinstalling"
    fi

    local stage
    stage=$(dirname -- "$CRIU_PREFIX")/.$(basename -- "$CRIU_PREFIX").new.$$
    mkdir -p -- "$(dirname -- "$CRIU_PREFIX")"
    rm -rf -- "$stage"
    CLEANUP_PATHS+=("$stage")
    mkdir -p -- "$stage"

    if [[ -x $CRIU_DIST_BIN ]]; then dist_version=$(criu_version_of "$CRIU_DIST_BIN" || true); fi
    check=""
    if [[ -n $dist_version ]] && version_ge "$dist_version" "$CRIU_MIN_VERSION"; then
        check=$("$CRIU_DIST_BIN" check 2>&1 || true)
    fi
    if [[ $check == *"Looks good."* ]]; then
        say "criu: using the distribution's $CRIU_DIST_BIN ($dist_version)"
        ln -s -- "$CRIU_DIST_BIN" "$stage/criu"
    else
        say "criu: the distribution's criu is ${dist_version:-absent} (need >= $CRIU_MIN_VERSION passing criu check);" \
            "installing CRIU from Debian $CRIU_SUITE into $CRIU_PREFIX (log: $log)"
        criu_build_private "$stage" "$log"
    fi

    criu_publish "$stage"
    version=$(criu_version_of "$bin" || true)
    if [[ -z $version ]] || ! version_ge "$version" "$CRIU_MIN_VERSION" || ! criu_verify "$bin" "$log"; then
        criu_rollback
        die "the CRIU installed into $CRIU_PREFIX (${version:-does not run}) failed verification (see $log)"
    fi
    criu_drop_previous
    criu_stamp "$version"
    say "criu: ok ($version at $bin, installed and verified in $(elapsed "$start"))"
}

criu_stamp() {
    printf '%s\n' "$1" >"$CRIU_PREFIX/.verified.tmp"
    mv -f -- "$CRIU_PREFIX/.verified.tmp" "$CRIU_PREFIX/.verified"
}

# ---- atomic publication: STAGE becomes PREFIX by rename; the previous PREFIX is kept aside
# until the new one is verified, and comes back if it is not.
CRIU_PREVIOUS=""

criu_publish() {
    local stage=$1 previous
    CRIU_PREVIOUS=""
    if [[ -e $CRIU_PREFIX || -L $CRIU_PREFIX ]]; then
        previous=$(dirname -- "$CRIU_PREFIX")/.$(basename -- "$CRIU_PREFIX").old.$$
        rm -rf -- "$previous"
        mv -T -- "$CRIU_PREFIX" "$previous"
        CRIU_PREVIOUS=$previous # only once it really is aside: the exit hook moves it back
    fi
    mv -T -- "$stage" "$CRIU_PREFIX"
}

# Exit hook: an install interrupted between criu_publish and its verification puts back the
# previous prefix (the new one was never stamped).
criu_exit_hook() {
    if [[ -n $CRIU_PREVIOUS ]]; then criu_rollback; fi
}
CLEANUP_HOOKS+=(criu_exit_hook)

criu_rollback() {
    rm -rf -- "$CRIU_PREFIX"
    if [[ -n $CRIU_PREVIOUS ]]; then mv -T -- "$CRIU_PREVIOUS" "$CRIU_PREFIX"; fi
    CRIU_PREVIOUS=""
}

criu_drop_previous() {
    if [[ -n $CRIU_PREVIOUS ]]; then rm -rf -- "$CRIU_PREVIOUS"; fi
    CRIU_PREVIOUS=""
}

# ---- the private install from Debian testing --------------------------------------------------------
# criu_build_private STAGE LOG: STAGE/criu and STAGE/lib, patched for the final CRIU_PREFIX.
criu_build_private() {
    local stage=$1 log=$2 work triplet deb version
    command -v patchelf >/dev/null || die "patchelf is missing (run ./stasis setup as root)"
    triplet=$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || printf '%s-linux-gnu' "$(uname -m)")
    work=$(mktemp -d /var/tmp/stasis-criu.XXXXXX)
    CLEANUP_PATHS+=("$work")
    mkdir -p "$work"/{debs,root}
    private_suite "$CRIU_SUITE" "$work/apt" "$log" "criu"
    local -a apt=("${PRIVATE_APT[@]}")

    local closure
    closure=$(apt-cache "${apt[@]}" depends --recurse --no-recommends --no-suggests --no-conflicts \
        --no-breaks --no-replaces --no-enhances criu 2> >(redact_hosts >>"$log")) ||
        die "apt-cache depends criu failed (see $log)"
    local -a packages
    mapfile -t packages < <(grep -v -e '^[[:space:]]' -e '^<' <<<"$closure" | sort -u)
    ((${#packages[@]} > 0)) || die "empty dependency closure for criu in $CRIU_SUITE (see $log)"
    printf 'closure: %s\n' "${packages[*]}" >>"$log"

    run_logged "criu: downloading ${#packages[@]} packages" "$log" \
        in_dir "$work/debs" apt-get "${apt[@]}" download "${packages[@]}" ||
        die "apt-get download failed (see $log)"

    deb=$(compgen -G "$work/debs/criu_*.deb" | head -n 1) || true
    [[ -n $deb ]] || die "criu's .deb was not downloaded (see $log)"
    version=$(dpkg-deb -f "$deb" Version)
    version=${version#*:}
    version=${version%%-*}
    version_ge "$version" "$CRIU_MIN_VERSION" ||
        die "Debian $CRIU_SUITE carries criu $version, older than $CRIU_MIN_VERSION"

    for deb in "$work"/debs/*.deb; do
        dpkg-deb -x "$deb" "$work/root" || die "cannot unpack $deb"
        # shellcheck disable=SC2016 # dpkg's own ${Field} syntax
        dpkg-deb -W --showformat='${Package} ${Version}\n' "$deb" >>"$stage/PACKAGES"
    done

    mkdir -p -- "$stage/lib"
    cp -- "$work/root/usr/sbin/criu" "$stage/criu"
    criu_copy_libs "$work/root" "$stage/lib" "$triplet"
    [[ -e $stage/lib/ld-linux-x86-64.so.2 && -e $stage/lib/libc.so.6 ]] ||
        die "the unpacked closure has no ld-linux-x86-64.so.2 / libc.so.6 (see $log)"
    # --force-rpath: a DT_RPATH also applies to the libraries' own dependencies (a RUNPATH would not).
    patchelf --set-interpreter "$CRIU_PREFIX/lib/ld-linux-x86-64.so.2" --force-rpath \
        --set-rpath "$CRIU_PREFIX/lib" "$stage/criu" >>"$log" 2>&1 || die "patchelf failed (see $log)"
    printf 'criu %s from Debian %s, %d packages, %s\n' "$version" "$CRIU_SUITE" "${#packages[@]}" \
        "$(du -sh "$stage" | cut -f1)" >>"$log"
    rm -rf -- "$work"
}

# criu_copy_libs ROOT DEST TRIPLET: every *.so* of the unpacked closure's library directories,
# dereferenced into DEST. Symlinks resolve inside ROOT (an absolute link target must not pick up
# the host's own library).
criu_copy_libs() {
    local root=$1 dest=$2 triplet=$3 dir file real target hops
    for dir in lib lib64 "lib/$triplet" usr/lib usr/lib64 "usr/lib/$triplet"; do
        [[ -d $root/$dir && ! -L $root/$dir ]] || continue
        while IFS= read -r -d '' file; do
            real=$file
            hops=0
            while [[ -L $real ]] && ((hops++ < 16)); do
                target=$(readlink -- "$real")
                if [[ $target == /* ]]; then real=$root$target; else real=$(dirname -- "$real")/$target; fi
            done
            [[ -f $real && ! -L $real ]] || continue
            cp -- "$real" "$dest/$(basename -- "$file")"
        done < <(find "$root/$dir" -maxdepth 1 -name '*.so*' \( -type f -o -type l \) -print0)
    done
}

# ---- verification: `criu check`, then dump and restore a process holding a listening TCP socket
# on 127.0.0.1 (the case trixie's 4.1 fails), and an HTTP request answered after the restore.
# criu_verify BIN LOG: returns non-zero on failure (with the reason and log tails printed).
criu_verify() {
    local bin=$1 log=$2 out dir rc=0
    out=$("$bin" check 2>&1) || true
    printf '==== %s check\n%s\n' "$bin" "$out" >>"$log"
    if [[ $out != *"Looks good."* ]]; then
        say "criu: '$bin check' did not say 'Looks good.'"
        print_log_tail "$log" 20
        return 1
    fi
    dir=$(mktemp -d /tmp/stasis-criu-verify.XXXXXX) || return 1
    CLEANUP_PATHS+=("$dir")
    criu_verify_socket "$bin" "$log" "$dir" || rc=$?
    # The test server is stopped on every path, also when it never listened: no function of the
    # launcher leaves a process running behind it.
    if [[ -n $CRIU_VERIFY_PID ]]; then
        stop_pid "$CRIU_VERIFY_PID"
        forget_pid "$CRIU_VERIFY_PID"
        CRIU_VERIFY_PID=""
    fi
    rm -rf -- "$dir"
    ((rc == 0)) || print_log_tail "$log" 30
    return "$rc"
}

CRIU_VERIFY_PID="" # the verification's test server, while it may run

# criu_verify_socket BIN LOG DIR: starts a busybox httpd on a loopback port (CRIU_VERIFY_PID), dumps
# it, restores it and asks it for a page.
criu_verify_socket() {
    local bin=$1 log=$2 dir=$3 port job code
    mkdir "$dir/www" "$dir/img" && printf 'stasis\n' >"$dir/www/index.html" || return 1
    port=$(free_loopback_port) || { say "criu: no free loopback port for the verification"; return 1; }

    # Its own session (criu then needs no --shell-job), stdio on /dev/null, pid written by itself
    # (setsid forks when it is a process group leader). The launcher holds no lock fd that it could
    # inherit (criu refuses tasks holding flocks): see lock_acquire.
    (
        # Nor any other descriptor the launcher was started with (a wrapper's log file, say): CRIU
        # cannot dump a file it cannot look up from here ("Can't lookup mount ... for fd=3").
        local fd
        for fd in /proc/"$BASHPID"/fd/*; do
            fd=${fd##*/}
            if ((fd > 2)); then eval "exec $fd>&-"; fi
        done
        # shellcheck disable=SC2016 # expanded by the inner sh
        exec setsid sh -c 'echo $$ >"$1" && exec busybox httpd -f -p "127.0.0.1:$2" -h "$3"' \
            stasis-criu-verify "$dir/pid" "$port" "$dir/www" </dev/null >/dev/null 2>&1
    ) &
    job=$!
    disown "$job" # bash would report the SIGKILL of the dump as "Killed"; it still reaps the child
    CRIU_VERIFY_PID=$job
    CLEANUP_PIDS+=("$job")
    if ! wait_until 50 test -s "$dir/pid"; then
        say "criu: the test server did not start"
        return 1
    fi
    if [[ $(<"$dir/pid") != "$job" ]]; then
        forget_pid "$job"
        CRIU_VERIFY_PID=$(<"$dir/pid")
        CLEANUP_PIDS+=("$CRIU_VERIFY_PID")
    fi
    if ! wait_until 50 port_listening "$port"; then
        say "criu: the test server did not start listening on 127.0.0.1:$port"
        return 1
    fi

    if ! "$bin" dump -t "$CRIU_VERIFY_PID" -D "$dir/img" -o dump.log -v4 >>"$log" 2>&1; then
        say "criu: dump of a process holding a listening TCP socket failed"
        criu_append_log "$log" "$dir/img/dump.log"
        return 1
    fi
    if ! wait_until 50 pid_gone "$CRIU_VERIFY_PID"; then # reaped: the restore needs its pid free again
        say "criu: the dumped process $CRIU_VERIFY_PID is still alive"
        return 1
    fi
    if ! "$bin" restore -d -D "$dir/img" -o restore.log -v4 >>"$log" 2>&1; then
        say "criu: restore of the dumped process failed"
        criu_append_log "$log" "$dir/img/restore.log"
        return 1
    fi
    code=$(curl --noproxy '*' -s -o /dev/null -w '%{http_code}' --max-time 5 "http://127.0.0.1:$port/" || true)
    if [[ $code != 200 ]]; then
        say "criu: the restored process did not answer on 127.0.0.1:$port (HTTP ${code:-none})"
        criu_append_log "$log" "$dir/img/restore.log"
        return 1
    fi
    printf 'verified: dump + restore of a listening socket, HTTP 200 after restore\n' >>"$log"
}

criu_append_log() {
    [[ -r $2 ]] || return 0
    printf '==== %s\n' "$2" >>"$1"
    cat -- "$2" >>"$1"
}
