# shellcheck shell=bash
# Packages from another Debian suite than the host's, without touching the host's apt state: the
# mirror this machine already uses, private package lists, cache and status. CRIU (criu.sh) and
# the tiny template's busybox (busybox.sh) come this way.

DEBIAN_KEYRING=/usr/share/keyrings/debian-archive-keyring.gpg

# ---- the Debian mirror this machine already uses ---------------------------------------------------
# debian_mirror_uri: the URI of the deb source carrying this release's main suite, from
# /etc/apt/sources.list.d/debian.sources (deb822), else /etc/apt/sources.list and *.list.
debian_mirror_uri() {
    local codename="" uri="" file
    # shellcheck disable=SC1091
    codename=$(. /etc/os-release && printf '%s' "${VERSION_CODENAME:-}")
    if [[ -r /etc/apt/sources.list.d/debian.sources ]]; then
        uri=$(awk -v want="$codename" '
            function flush() {
                if (!found && uri != "" && enabled && (" " types " ") ~ / deb / &&
                    (want == "" || (" " suites " ") ~ (" " want " "))) { print uri; found = 1 }
                uri = ""; suites = ""; types = ""; enabled = 1
            }
            BEGIN { enabled = 1 }
            /^[ \t]*#/ { next }
            /^[ \t]*$/ { flush(); next }
            tolower($1) == "uris:"    { uri = $2 }
            tolower($1) == "suites:"  { $1 = ""; suites = $0 }
            tolower($1) == "types:"   { $1 = ""; types = $0 }
            tolower($1) == "enabled:" { enabled = (tolower($2) != "no") }
            END { flush() }' /etc/apt/sources.list.d/debian.sources)
    fi
    if [[ -z $uri ]]; then
        for file in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
            [[ -r $file ]] || continue
            uri=$(awk -v want="$codename" '
                $1 == "deb" {
                    i = 2
                    if ($i ~ /^\[/) { while (i < NF && $i !~ /\]$/) i++; i++ }
                    if (want == "" || $(i + 1) == want) { print $i; exit }
                }' "$file")
            [[ -z $uri ]] || break
        done
    fi
    [[ $uri == http://* || $uri == https://* ]] || return 1
    printf '%s\n' "${uri%/}"
}

# private_suite SUITE WORK LOG STEP [deb-src]: apt state of its own in WORK for Debian SUITE from
# this machine's mirror, its package lists (and, with deb-src, its source lists) fetched; sets
# PRIVATE_APT to the options that make apt-get and apt-cache use it. The host's lists, cache, status and preferences are neither read nor
# written, and an empty status makes a dependency closure resolve wholly from SUITE (libc
# included).
PRIVATE_APT=()
private_suite() {
    local suite=$1 work=$2 log=$3 step=$4 sources=${5:-} mirror arch
    [[ -r $DEBIAN_KEYRING ]] || die "$DEBIAN_KEYRING is missing (package debian-archive-keyring)"
    mirror=$(debian_mirror_uri) ||
        die "cannot read the Debian mirror URI from /etc/apt/sources.list.d/debian.sources or /etc/apt/sources.list"
    arch=$(dpkg --print-architecture)
    mkdir -p "$work"/{etc/sources.list.d,etc/preferences.d,state,lists/partial,cache/archives/partial}
    : >"$work/status"
    printf 'deb [signed-by=%s] %s %s main\n' "$DEBIAN_KEYRING" "$mirror" "$suite" >"$work/etc/sources.list"
    if [[ $sources == deb-src ]]; then
        printf 'deb-src [signed-by=%s] %s %s main\n' "$DEBIAN_KEYRING" "$mirror" "$suite" >>"$work/etc/sources.list"
    fi
    PRIVATE_APT=(
        -o "Dir::Etc::SourceList=$work/etc/sources.list"
        -o "Dir::Etc::SourceParts=$work/etc/sources.list.d"
        -o "Dir::Etc::Preferences=$work/etc/preferences"
        -o "Dir::Etc::PreferencesParts=$work/etc/preferences.d"
        -o "Dir::State=$work/state"
        -o "Dir::State::Lists=$work/lists"
        -o "Dir::State::status=$work/status"
        -o "Dir::Cache=$work/cache"
        -o "Dir::Cache::archives=$work/cache/archives"
        -o "APT::Architecture=$arch"
        -o "APT::Architectures=$arch"
        -o APT::Sandbox::User=root
        -o Acquire::Languages=none
        -o APT::Get::List-Cleanup=false
    )
    run_logged "$step: apt-get update ($suite, private state)" "$log" apt-get "${PRIVATE_APT[@]}" update ||
        die "apt-get update of the private $suite lists failed (see $log)"
}
