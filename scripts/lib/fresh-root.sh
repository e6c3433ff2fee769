# shellcheck shell=bash
# The fresh-machine test of ./stasis test: the README's first command, run on a machine that has
# nothing of Stasis, must set everything up and start the service, and stopping it must leave
# nothing behind.
#
# A "fresh machine" is a Debian root of this host's release, made with debootstrap from the mirror
# this host already uses, plus what a new machine of this kind comes with (Temurin 25 at the same
# path, Debian's Maven and default JDK, gcc, git, curl, python3, procps, iproute2) and this host's
# apt configuration. It is built once and cached (FRESH_ROOT_CACHE, default
# /var/cache/stasis/fresh-root; rebuilt when its recipe changes), and every run works on a
# throwaway overlay of it:
#   1. git clone of the committed tree into /root/stasis of the overlay (uncommitted changes are
#      not part of the test), an empty Maven repository, a clean environment;
#   2. `./stasis up` in a chroot of it, until it prints "listening on" (FRESH_ROOT_TIMEOUT
#      seconds, default 900);
#   3. SIGTERM to the service, which must end within 60 s;
#   4. the check: no process left with its root in the overlay, no mount under it but those of
#      the harness, no loop device backed by a file in it, and no nftables table, network link or
#      cgroup that was not on the host before;
#   5. the overlay is taken down whatever happened (processes killed by pid, mounts undone in
#      reverse order, loop devices detached), so a failed run leaves nothing behind either.
# The service gets flags that keep it off an instance the host may run itself (another port,
# preview port, nftables table, interface prefix, address range and NFLOG group); the set-up,
# which is what the test proves, is the same as that of a plain `./stasis up`.

FRESH_ROOT_RECIPE=4 # bump to rebuild cached roots when what goes into them changes
FRESH_ROOT_PACKAGES=(ca-certificates curl git python3 gcc make procps iproute2 maven)
FRESH_ROOT_PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
FRESH_ROOT_JDK=${STASIS_JAVA_HOME_DEFAULT:-/usr/lib/jvm/temurin-25-jdk-amd64}
FRESH_ROOT_SERVER_FLAGS=(--port 0 --preview-port 0 --network-table stasis_fresh --network-interface-prefix sfr
    --network-range 10.197.0.0/16 --network-log-group 7697)

FRESH_RUN_DIR=""  # the throwaway overlay's directory while a run is under way
FRESH_HARNESS_MOUNTS=(proc sys sys/fs/cgroup dev dev/pts dev/shm run)
FRESH_PROBLEMS=()

# fresh_root_test: the whole test; returns non-zero when the service did not come up or left
# something behind.
fresh_root_test() {
    local start=${EPOCHREALTIME//[!0-9]/} cache=${FRESH_ROOT_CACHE:-/var/cache/stasis/fresh-root} rc=0
    require_root "the fresh-machine test (debootstrap, chroot, overlay mounts)"
    command -v debootstrap >/dev/null || die "debootstrap is missing (run ./stasis setup)"
    [[ -x $FRESH_ROOT_JDK/bin/java ]] || die "no JDK at $FRESH_ROOT_JDK to copy into the fresh root"
    say "fresh machine: the README's ./stasis up on a fresh Debian root"
    fresh_root_build "$cache" || return 1
    FRESH_PROBLEMS=()
    CLEANUP_HOOKS+=(fresh_run_teardown)
    fresh_run "$cache/root" || rc=$?
    fresh_run_teardown
    if ((${#FRESH_PROBLEMS[@]})); then
        say "fresh machine: FAILED:"
        printf '    - %s\n' "${FRESH_PROBLEMS[@]}" >&2
        rc=1
    elif ((rc == 0)); then
        say "fresh machine: ok (in $(elapsed "$start"))"
    fi
    return "$rc"
}

# ---- the cached fresh root --------------------------------------------------------------------
fresh_root_recipe() {
    local codename
    # shellcheck disable=SC1091
    codename=$(. /etc/os-release && printf '%s' "${VERSION_CODENAME:-}")
    printf 'recipe %s; %s; packages %s; jdk %s\n' "$FRESH_ROOT_RECIPE" "$codename" "${FRESH_ROOT_PACKAGES[*]}" \
        "$(sed -n 's/^JAVA_VERSION="\(.*\)"/\1/p' "$FRESH_ROOT_JDK/release" 2>/dev/null)"
}

# fresh_root_build CACHE: CACHE/root, built unless CACHE/recipe says it is already this recipe's.
fresh_root_build() {
    local cache=$1 recipe start=${EPOCHREALTIME//[!0-9]/} stage log mirror codename
    recipe=$(fresh_root_recipe)
    if [[ -d $cache/root && $(cat "$cache/recipe" 2>/dev/null) == "$recipe" ]]; then
        say "fresh machine: root ok (cached in $cache)"
        return 0
    fi
    lock_acquire "$cache.lock" "fresh root build"
    if [[ -d $cache/root && $(cat "$cache/recipe" 2>/dev/null) == "$recipe" ]]; then
        say "fresh machine: root ok (cached in $cache)"
        return 0
    fi
    mkdir -p -- "$cache"
    log=$cache/build.log
    : >"$log"
    mirror=$(debian_mirror_uri) || die "cannot read this host's Debian mirror from its apt sources"
    # shellcheck disable=SC1091
    codename=$(. /etc/os-release && printf '%s' "${VERSION_CODENAME:-}")
    stage=$cache/.root.new.$$
    rm -rf --one-file-system -- "$stage"
    CLEANUP_PATHS+=("$stage")
    FRESH_STAGE=$stage
    CLEANUP_HOOKS+=(fresh_stage_unmount)
    say "fresh machine: building the root once ($codename, minbase + ${FRESH_ROOT_PACKAGES[*]}; log: $log)"
    run_logged "fresh machine: debootstrap" "$log" debootstrap --variant=minbase "$codename" "$stage" "$mirror" ||
        die "debootstrap of the fresh root failed (see $log)"
    fresh_copy_host_config "$stage"
    printf '#!/bin/sh\nexit 101\n' >"$stage/usr/sbin/policy-rc.d" # no daemons started inside
    chmod 755 "$stage/usr/sbin/policy-rc.d"
    fresh_mount_harness "$stage" || die "cannot mount the kernel filesystems into $stage"
    run_logged "fresh machine: apt-get install" "$log" fresh_chroot "$stage" /bin/sh -c \
        "apt-get update && apt-get install -y ${FRESH_ROOT_PACKAGES[*]} && update-ca-certificates && apt-get clean" ||
        die "installing the fresh root's packages failed (see $log)"
    fresh_stage_unmount
    mkdir -p -- "$stage$(dirname -- "$FRESH_ROOT_JDK")"
    cp -a -- "$FRESH_ROOT_JDK" "$stage$(dirname -- "$FRESH_ROOT_JDK")/" || die "cannot copy $FRESH_ROOT_JDK into the fresh root"
    rm -rf --one-file-system -- "$cache/root"
    mv -T -- "$stage" "$cache/root"
    printf '%s\n' "$recipe" >"$cache/recipe"
    say "fresh machine: root built in $(elapsed "$start") ($(du -sh --one-file-system "$cache/root" | cut -f1))"
}

FRESH_STAGE=""
fresh_stage_unmount() {
    [[ -n $FRESH_STAGE && -d $FRESH_STAGE ]] || return 0
    fresh_unmount_under "$FRESH_STAGE" keep-root
}

# What the machine's image adds to Debian and a fresh machine has too: the host's apt sources and
# the apt settings no package owns (the same mirror, the same options), the local CA certificates
# (the TLS of this kind's network is checked against them), the resolver and hosts files.
fresh_copy_host_config() {
    local root=$1 file
    rm -f -- "$root/etc/apt/sources.list"
    mkdir -p -- "$root/etc/apt/sources.list.d" "$root/etc/apt/apt.conf.d"
    for file in /etc/apt/sources.list /etc/apt/sources.list.d/*.sources /etc/apt/sources.list.d/*.list \
        /etc/apt/apt.conf.d/* /etc/apt/trusted.gpg.d/* /etc/apt/keyrings/*; do
        [[ -f $file ]] || continue
        [[ $file == /etc/apt/sources.list* ]] || ! dpkg -S "$file" >/dev/null 2>&1 || continue
        mkdir -p -- "$root$(dirname -- "$file")"
        cp -a -- "$file" "$root$file"
    done
    if compgen -G '/usr/local/share/ca-certificates/*' >/dev/null; then
        mkdir -p -- "$root/usr/local/share/ca-certificates"
        cp -a -- /usr/local/share/ca-certificates/. "$root/usr/local/share/ca-certificates/"
    fi
    rm -f -- "$root/etc/resolv.conf" "$root/etc/hosts"
    cat /etc/resolv.conf >"$root/etc/resolv.conf"
    cat /etc/hosts >"$root/etc/hosts"
}

# fresh_chroot ROOT CMD...: CMD inside ROOT with the clean environment of a new login.
fresh_chroot() {
    local root=$1
    shift
    env --default-signal -i HOME=/root "PATH=$FRESH_ROOT_PATH" TERM=dumb LANG=C.UTF-8 DEBIAN_FRONTEND=noninteractive \
        chroot "$root" "$@"
}

# fresh_mount_harness ROOT: the kernel's filesystems bound in (private: nothing propagates back),
# fresh tmpfs on /run and /dev/shm, as a booted machine has them.
fresh_mount_harness() {
    local r=$1
    mkdir -p -- "$r/proc" "$r/sys" "$r/dev" "$r/run" || return 1
    mount --bind /proc "$r/proc" && mount --make-private "$r/proc" || return 1
    mount --bind /sys "$r/sys" && mount --make-private "$r/sys" || return 1
    if mountpoint -q /sys/fs/cgroup; then
        mount --rbind /sys/fs/cgroup "$r/sys/fs/cgroup" && mount --make-rprivate "$r/sys/fs/cgroup" || return 1
    fi
    mount --bind /dev "$r/dev" && mount --make-private "$r/dev" || return 1
    mount --bind /dev/pts "$r/dev/pts" && mount --make-private "$r/dev/pts" || return 1
    mount -t tmpfs -o mode=1777,nosuid,nodev shm "$r/dev/shm" && mount --make-private "$r/dev/shm" || return 1
    mount -t tmpfs -o mode=755,nosuid,nodev tmpfs "$r/run" && mount --make-private "$r/run" || return 1
    mkdir -p -- "$r/run/lock" && chmod 1777 "$r/run/lock"
}

# fresh_mounts_under DIR: mount points at or below DIR, parents first (mountinfo order).
fresh_mounts_under() {
    awk -v r="$1" '{ mp = $5; gsub(/\\040/, " ", mp); if (mp == r || index(mp, r "/") == 1) print mp }' /proc/self/mountinfo
}

# fresh_unmount_under DIR [keep-root]: every mount below DIR (and DIR itself unless keep-root),
# deepest first; busy ones retried, then detached lazily (and reported).
fresh_unmount_under() {
    local dir=$1 keep=${2:-} pass mp
    for ((pass = 0; pass < 20; pass++)); do
        local -a left=()
        while IFS= read -r mp; do
            [[ -n $keep && $mp == "$dir" ]] || left+=("$mp")
        done < <(fresh_mounts_under "$dir" | tac)
        ((${#left[@]})) || return 0
        for mp in "${left[@]}"; do umount -- "$mp" 2>/dev/null || true; done
        sleep 0.2
    done
    while IFS= read -r mp; do
        [[ -n $keep && $mp == "$dir" ]] && continue
        umount -l -- "$mp" 2>/dev/null || true
        FRESH_PROBLEMS+=("a mount stayed busy and was only detached lazily: $mp")
    done < <(fresh_mounts_under "$dir" | tac)
}

# ---- one run --------------------------------------------------------------------------------
# fresh_run LOWER: the overlay, the clone, ./stasis up, the stop and the check.
fresh_run() {
    local lower=$1 run root log pid start=${EPOCHREALTIME//[!0-9]/} deadline
    run=$(mktemp -d /var/tmp/stasis-fresh-run.XXXXXX) || return 1
    FRESH_RUN_DIR=$run
    root=$run/root
    log=$run/up.log
    mkdir -p -- "$run/upper" "$run/work" "$root"
    fresh_host_state "$run/before"
    mount -t overlay overlay -o "lowerdir=$lower,upperdir=$run/upper,workdir=$run/work" "$root" ||
        { FRESH_PROBLEMS+=("cannot mount an overlay of $lower"); return 1; }
    mount --make-private "$root"
    fresh_mount_harness "$root" || { FRESH_PROBLEMS+=("cannot mount the kernel filesystems into $root"); return 1; }
    cat /etc/resolv.conf >"$root/etc/resolv.conf"
    git clone --quiet --no-hardlinks -- "$STASIS_ROOT" "$root/root/stasis" ||
        { FRESH_PROBLEMS+=("git clone of $STASIS_ROOT failed"); return 1; }
    say "fresh machine: $(git -C "$root/root/stasis" log -1 --format='%h %s' | cut -c1-80)"
    say "fresh machine: ./stasis up ${FRESH_ROOT_SERVER_FLAGS[*]} (log: $log)"

    # env, chroot, bash and the launcher exec one another, so this pid becomes the server's (a
    # function here would leave a subshell in between, which SIGTERM would end alone).
    env --default-signal -i HOME=/root "PATH=$FRESH_ROOT_PATH" TERM=dumb LANG=C.UTF-8 \
        chroot "$root" /bin/bash -lc "cd /root/stasis && exec ./stasis up ${FRESH_ROOT_SERVER_FLAGS[*]}" \
        </dev/null >"$log" 2>&1 &
    pid=$!
    deadline=$((SECONDS + ${FRESH_ROOT_TIMEOUT:-900}))
    local shown=0
    until grep -q '^listening on ' "$log" 2>/dev/null; do
        shown=$(fresh_show_progress "$log" "$shown")
        if ! kill -0 "$pid" 2>/dev/null; then
            wait "$pid" 2>/dev/null
            FRESH_PROBLEMS+=("./stasis up ended (exit $?) before it printed 'listening on'")
            print_log_tail "$log" 40
            return 1
        fi
        if ((SECONDS >= deadline)); then
            FRESH_PROBLEMS+=("./stasis up did not print 'listening on' within ${FRESH_ROOT_TIMEOUT:-900} s")
            print_log_tail "$log" 40
            kill -KILL "$pid" 2>/dev/null
            return 1
        fi
        sleep 1
    done
    fresh_show_progress "$log" "$shown" >/dev/null
    say "fresh machine: $(grep -m1 '^listening on ' "$log") after $(elapsed "$start")"
    fresh_check_answers "$log"

    kill -TERM "$pid"
    local i
    for ((i = 0; i < 600; i++)); do
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.1
    done
    if kill -0 "$pid" 2>/dev/null; then
        FRESH_PROBLEMS+=("the service did not end within 60 s of SIGTERM")
        kill -KILL "$pid" 2>/dev/null
    fi
    wait "$pid" 2>/dev/null
    fresh_check_leftovers "$run"
}

# fresh_show_progress LOG SHOWN: prints the launcher's "[stasis]" lines after the first SHOWN of
# them; echoes the new count.
fresh_show_progress() {
    local log=$1 shown=$2 line n=0
    while IFS= read -r line; do
        n=$((n + 1))
        ((n > shown)) && printf '    %s\n' "$line" >&2
    done < <(grep '^\[stasis\]' "$log" 2>/dev/null | grep -v 'still running')
    printf '%s\n' "$n"
}

# The service answers on the port it printed: health, and an authenticated list with the root key.
fresh_check_answers() {
    local log=$1 url key code
    url=$(sed -n 's/^listening on \(http:[^ ]*\).*/\1/p' "$log" | head -n 1)
    key=$(cat "$FRESH_RUN_DIR/root/var/lib/stasis/root.key" 2>/dev/null)
    code=$(curl --noproxy '*' -s -o /dev/null -w '%{http_code}' --max-time 10 "$url/healthz" || true)
    [[ $code == 200 ]] || FRESH_PROBLEMS+=("GET $url/healthz answered ${code:-nothing}, not 200")
    code=$(curl --noproxy '*' -s -o /dev/null -w '%{http_code}' --max-time 10 -H "Authorization: Bearer $key" \
        "$url/v1/sandboxes" || true)
    [[ $code == 200 ]] || FRESH_PROBLEMS+=("GET $url/v1/sandboxes with the root key answered ${code:-nothing}, not 200")
}

# ---- what a run may not leave behind ----------------------------------------------------------
# fresh_host_state DIR: the host-wide things a service creates, one file each.
fresh_host_state() {
    local dir=$1
    mkdir -p -- "$dir"
    nft list tables 2>/dev/null | sort >"$dir/nft"
    ip -o link show 2>/dev/null | awk -F': ' '{ sub(/@.*/, "", $2); print $2 }' | sort >"$dir/links"
    find /sys/fs/cgroup -mindepth 1 -maxdepth 5 -type d 2>/dev/null | sort >"$dir/cgroups"
}

fresh_check_leftovers() {
    local run=$1 root=$1/root pid line mp
    while IFS= read -r pid; do
        FRESH_PROBLEMS+=("process left running: $pid $(tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | cut -c1-120)")
    done < <(fresh_pids_in "$root")
    while IFS= read -r mp; do
        fresh_is_harness_mount "$root" "$mp" || FRESH_PROBLEMS+=("mount left: ${mp#"$root"}")
    done < <(fresh_mounts_under "$root")
    while IFS= read -r line; do
        FRESH_PROBLEMS+=("loop device left: $line")
    done < <(fresh_loops_in "$run")
    fresh_host_state "$run/after"
    local what
    for what in nft links cgroups; do
        while IFS= read -r line; do
            FRESH_PROBLEMS+=("$what left: $line")
        done < <(comm -13 "$run/before/$what" "$run/after/$what")
    done
}

fresh_is_harness_mount() {
    local root=$1 mp=$2 known
    [[ $mp == "$root" ]] && return 0
    for known in "${FRESH_HARNESS_MOUNTS[@]}"; do
        [[ $mp == "$root/$known" || ($known == sys/fs/cgroup && $mp == "$root/$known/"*) ]] && return 0
    done
    return 1
}

# fresh_pids_in ROOT: processes whose root directory is ROOT or below it.
fresh_pids_in() {
    local root=$1 p link
    for p in /proc/[0-9]*; do
        link=$(readlink "$p/root" 2>/dev/null) || continue
        [[ $link == "$root" || $link == "$root"/* ]] && printf '%s\n' "${p#/proc/}"
    done
}

# fresh_loops_in DIR: "device file" of each loop device backed by a file under DIR.
fresh_loops_in() {
    local dir=$1 backing file
    for backing in /sys/block/loop*/loop/backing_file; do
        [[ -r $backing ]] || continue
        file=$(<"$backing")
        [[ $file == "$dir"/* ]] || continue
        backing=${backing#/sys/block/}
        printf '/dev/%s %s\n' "${backing%%/*}" "$file"
    done
}

# fresh_run_teardown: everything of the run goes, whatever state it is in (also from the exit hook).
fresh_run_teardown() {
    local run=$FRESH_RUN_DIR root pid pass line
    [[ -n $run && -d $run ]] || return 0
    root=$run/root
    for pass in TERM KILL; do
        while IFS= read -r pid; do kill "-$pass" "$pid" 2>/dev/null || true; done < <(fresh_pids_in "$root")
        [[ -z $(fresh_pids_in "$root") ]] && break
        sleep 2
    done
    while IFS= read -r line; do losetup -d "${line%% *}" 2>/dev/null || true; done < <(fresh_loops_in "$run")
    fresh_unmount_under "$root"
    while IFS= read -r line; do
        FRESH_PROBLEMS+=("loop device still attached after the teardown: $line")
    done < <(fresh_loops_in "$run")
    if [[ -n $(fresh_mounts_under "$run") ]]; then
        FRESH_PROBLEMS+=("kept $run: something is still mounted under it")
    else
        rm -rf --one-file-system -- "$run"
    fi
    FRESH_RUN_DIR=""
}
