# shellcheck shell=bash
# Setup steps of ./stasis other than CRIU: apt packages, Java 25, the Maven repository URL.
# Each step is idempotent, cheap to skip when done, and prints one "[stasis] STEP: ..." line.

# runc/btrfs/iproute2/nftables: the sandbox runtime. iptables: CRIU's network lock calls
# iptables-restore / ip6tables-restore (without it checkpoints fail). patchelf: the private CRIU.
# debootstrap/busybox-static: templates (and CRIU's check). gcc/libc6-dev/make/patch/bzip2/xz-utils:
# small static helpers, and the tiny template's busybox, built from source (busybox.sh). unzip: the Maven
# wrapper and the super-POM lookup below. python3/openssl: the network tests' upstream hosts (HTTP,
# TLS and UDP servers in network namespaces). rclone/fuse3: bucket mounts (rclone mount serves an S3
# bucket through FUSE and calls fusermount3; see mounts-fuse's Rclone for why rclone).
STASIS_APT_PACKAGES=(
    runc btrfs-progs iproute2 nftables iptables patchelf debootstrap busybox-static
    gcc libc6-dev make patch bzip2 xz-utils tar zstd curl jq util-linux procps unzip ca-certificates python3 openssl
    rclone fuse3
)
# What only the tests need, installed by ./stasis test: docker-registry, the loopback registry image
# pulls are tested against; libcap2-bin (setcap/getcap), file capabilities in imported images;
# postgresql, the server the PostgreSQL catalog's tests start on private ports (no cluster of the
# package's own: see no_default_postgresql_cluster); chromium, the real browser the web console's
# test drives (through playwright-core from npm).
STASIS_TEST_APT_PACKAGES=(docker-registry libcap2-bin postgresql chromium)

STASIS_JAVA_HOME_DEFAULT=/usr/lib/jvm/temurin-25-jdk-amd64
STASIS_JAVA_MAJOR=25

# ---- apt packages ---------------------------------------------------------------------------
# missing_apt_packages: prints the packages of STASIS_APT_PACKAGES not installed, one per line.
missing_apt_packages() {
    local installed pkg
    installed=$(dpkg-query -W -f='${Package} ${db:Status-Abbrev}\n' "${STASIS_APT_PACKAGES[@]}" 2>/dev/null || true)
    for pkg in "${STASIS_APT_PACKAGES[@]}"; do
        grep -qxE "${pkg//./\\.}(:[a-z0-9]+)? ii ?" <<<"$installed" || printf '%s\n' "$pkg"
    done
}

# no_default_postgresql_cluster: before postgresql is first installed, tells its postgresql-common not to
# create and start a "main" cluster on port 5432 (Debian's documented switch); the tests run their own.
no_default_postgresql_cluster() {
    local conf=/etc/postgresql-common/createcluster.conf
    [[ -e $conf ]] && return 0
    mkdir -p "${conf%/*}"
    printf '# Written by Stasis before installing postgresql: its tests start their own clusters.\ncreate_main_cluster = false\n' >"$conf"
}

apt_step() {
    local missing log start=${EPOCHREALTIME//[!0-9]/}
    mapfile -t missing < <(missing_apt_packages)
    if ((${#missing[@]} == 0)); then
        say "apt packages: ok (cached)"
        return 0
    fi
    require_root "installing apt packages (${missing[*]})"
    lock_acquire /run/lock/stasis-setup.lock setup
    mapfile -t missing < <(missing_apt_packages) # another launcher may have installed them meanwhile
    if ((${#missing[@]} == 0)); then
        say "apt packages: ok (cached)"
        return 0
    fi
    log=$(setup_log_dir)/apt.log
    say "apt packages: installing ${missing[*]} (log: $log)"
    export DEBIAN_FRONTEND=noninteractive
    [[ " ${missing[*]} " == *" postgresql "* ]] && no_default_postgresql_cluster
    run_logged "apt packages: apt-get update" "$log" \
        apt-get -o DPkg::Lock::Timeout=300 update || die "apt-get update failed (see $log)"
    run_logged "apt packages: apt-get install" "$log" \
        apt-get -o DPkg::Lock::Timeout=300 install -y --no-install-recommends "${missing[@]}" ||
        die "apt-get install ${missing[*]} failed (see $log)"
    mapfile -t missing < <(missing_apt_packages)
    ((${#missing[@]} == 0)) || die "still missing after apt-get install: ${missing[*]} (see $log)"
    say "apt packages: ok (installed in $(elapsed "$start"))"
}

# ---- kernel limits --------------------------------------------------------------------------------
# Each file watch of the API holds one inotify instance, and the default of 128 per user is shared
# with everything else running as root; the number of watched directories is shared the same way.
# runc gives every sandbox a session keyring, charged to the host user its root maps to (100000,
# the same for all sandboxes): the default quota of 200 keys / 20000 bytes per user stopped creates
# at ~190 running sandboxes ("unable to create session key: disk quota exceeded"). Sandboxes cannot
# make keys themselves (seccomp refuses the keyring calls), so the quota only counts those.
# Raised (never lowered) for the running kernel only; a reboot returns to the distribution's values.
STASIS_SYSCTL_MINIMUMS=(fs.inotify.max_user_instances=4096 fs.inotify.max_user_watches=1048576
    kernel.keys.maxkeys=100000 kernel.keys.maxbytes=10000000)

kernel_limits_step() {
    local setting key want have raised=()
    for setting in "${STASIS_SYSCTL_MINIMUMS[@]}"; do
        key=${setting%%=*} want=${setting#*=}
        have=$(sysctl -n "$key" 2>/dev/null) || continue
        ((have >= want)) && continue
        if is_root && sysctl -q -w "$key=$want" >/dev/null 2>&1; then raised+=("$key=$want"); else
            say "kernel limits: $key is $have (below $want; file watches or sandboxes may run out: run as root to raise it)"
        fi
    done
    if ((${#raised[@]})); then say "kernel limits: raised ${raised[*]}"; else say "kernel limits: ok"; fi
}

# ---- Java ---------------------------------------------------------------------------------------
# java_step [quiet]: exports JAVA_HOME (default Temurin 25) and sets JAVA; fails unless it is a
# JDK 25. Reads $JAVA_HOME/release (instant) and only falls back to `java -version`.
java_step() {
    local quiet=${1:-} version=""
    export JAVA_HOME=${JAVA_HOME:-$STASIS_JAVA_HOME_DEFAULT}
    JAVA=$JAVA_HOME/bin/java
    local hint="Stasis needs a JDK $STASIS_JAVA_MAJOR: set JAVA_HOME to one (the default is $STASIS_JAVA_HOME_DEFAULT)"
    [[ -x $JAVA ]] || die "no Java at $JAVA. $hint"
    if [[ -r $JAVA_HOME/release ]]; then
        local line
        while IFS= read -r line; do
            if [[ $line =~ ^JAVA_VERSION=\"([^\"]*)\" ]]; then version=${BASH_REMATCH[1]}; fi
        done <"$JAVA_HOME/release"
    fi
    if [[ -z $version ]]; then
        version=$("$JAVA" -version 2>&1 | sed -n 's/.* version "\([^"]*\)".*/\1/p' | head -n 1)
    fi
    [[ ${version%%[.+-]*} == "$STASIS_JAVA_MAJOR" ]] ||
        die "$JAVA is Java ${version:-of unknown version}, not $STASIS_JAVA_MAJOR. $hint"
    [[ -x $JAVA_HOME/bin/javac ]] || die "$JAVA_HOME is a JRE without javac. $hint"
    [[ -n $quiet ]] || say "java: ok ($version at $JAVA_HOME)"
}

# ---- Maven repository for the wrapper --------------------------------------------------------------
# The repository base is deliberately not written anywhere in the repository: it comes from this
# machine's Maven configuration, and is passed to ./mvnw as MVNW_REPOURL (never stored in a file).

# settings_mirror_url FILE: URL of the first non-blocked <mirror> whose <mirrorOf> covers central.
settings_mirror_url() {
    [[ -r $1 ]] || return 0
    perl -0777 -ne '
        s/<!--.*?-->//gs;
        while (m{<mirror>(.*?)</mirror>}gs) {
            my $m = $1;
            my ($of) = $m =~ m{<mirrorOf>\s*(.*?)\s*</mirrorOf>}s or next;
            my ($url) = $m =~ m{<url>\s*(.*?)\s*</url>}s or next;
            next if $m =~ m{<blocked>\s*true\s*</blocked>}s;
            my @of = map { s/^\s+|\s+$//gr } split /,/, $of;
            next if grep { $_ eq "!central" } @of;
            next unless grep { $_ eq "*" || $_ eq "central" || $_ eq "external:*" || $_ eq "external:https:*" } @of;
            $url =~ s{/+$}{};
            print "$url\n";
            last;
        }' -- "$1"
}

# super_pom_central_url: the `central` URL of the installed Maven's super-POM, minus /maven2.
super_pom_central_url() {
    local jar
    command -v unzip >/dev/null || return 0
    for jar in /usr/share/maven/lib/maven-model-builder*.jar; do
        [[ -r $jar ]] || continue
        unzip -p "$jar" org/apache/maven/model/pom-4.0.0.xml 2>/dev/null |
            sed -n 's:.*<url>[[:space:]]*\(.*\)/maven2/*[[:space:]]*</url>.*:\1:p' | head -n 1
        return 0
    done
}

# maven_repo_step [quiet]: exports MVNW_REPOURL (an explicit MVNW_REPOURL in the environment wins).
maven_repo_step() {
    local quiet=${1:-} url="" source="" file
    if [[ -n ${MVNW_REPOURL:-} ]]; then
        source="MVNW_REPOURL from the environment"
        url=$MVNW_REPOURL
    else
        for file in "$HOME/.m2/settings.xml" /etc/maven/settings.xml /usr/share/maven/conf/settings.xml; do
            url=$(settings_mirror_url "$file")
            if [[ -n $url ]]; then
                source="mirror in $file"
                break
            fi
        done
        if [[ -z $url ]]; then
            url=$(super_pom_central_url)
            source="central in the installed Maven's super-POM"
        fi
    fi
    [[ -n $url ]] || die "cannot find the Maven repository URL: no <mirror> of central in ~/.m2/settings.xml," \
        "/etc/maven/settings.xml or /usr/share/maven/conf/settings.xml, and no Maven installed under" \
        "/usr/share/maven to read Maven Central's URL from (install Debian's maven package, or set MVNW_REPOURL)"
    export MVNW_REPOURL=$url
    [[ -n $quiet ]] || say "maven repository: ok ($source)"
}
