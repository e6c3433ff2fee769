# shellcheck shell=bash
# The Maven build of ./stasis, run only when stale: the application's jar is missing, or a pom.xml,
# a file under some */src/main/, .mvn/ or mvnw is newer than the stamp of its last successful build.
#
# One stamp per application (.build/stamp.server, .build/stamp.cli, .build/stamp.bench): the CLI
# path builds only `-pl cli -am`, so a CLI call after an edit never rewrites the jar of a server
# that is running from this tree. `./stasis build` builds the whole reactor and stamps all three.

STASIS_BUILD_DIR=$STASIS_ROOT/.build
STASIS_BUILD_LOG=$STASIS_BUILD_DIR/logs/build.log
STASIS_APPS=(server cli bench)

# jar_of APP: the runnable jar the build leaves in APP/target (with its lib/ next to it).
jar_of() { printf '%s/%s/target/stasis-%s.jar' "$STASIS_ROOT" "$1" "$1"; }
stamp_of() { printf '%s/stamp.%s' "$STASIS_BUILD_DIR" "$1"; }

# build_stale_reason APP: prints why APP needs a build, or nothing when it does not.
build_stale_reason() {
    local app=$1 stamp changed
    stamp=$(stamp_of "$app")
    [[ -f $(jar_of "$app") ]] || { printf '%s\n' "$app/target/stasis-$app.jar is missing"; return 0; }
    [[ -f $stamp ]] || { printf 'no previous build of %s\n' "$app"; return 0; }
    # Only what goes into the jar counts: poms and main sources (not tests). The CLI is built from
    # the SDK and itself alone, so edits elsewhere never rebuild it.
    local -a roots=("$STASIS_ROOT")
    [[ $app == cli ]] && roots=("$STASIS_ROOT/pom.xml" "$STASIS_ROOT/.mvn" "$STASIS_ROOT/mvnw" "$STASIS_ROOT/sdk" "$STASIS_ROOT/cli")
    changed=$(find "${roots[@]}" -mindepth 0 \
        \( -name target -o -name .git -o -name .build -o -name .idea -o -name node_modules \) -prune -o \
        \( -name pom.xml -o -path '*/src/main' -o -path '*/src/main/*' -o -path "$STASIS_ROOT/.mvn" \
        -o -path "$STASIS_ROOT/.mvn/*" -o -path "$STASIS_ROOT/mvnw" \) \
        -newer "$stamp" -print -quit 2>/dev/null || true)
    [[ -z $changed ]] || printf '%s changed\n' "${changed#"$STASIS_ROOT"/}"
}

# stale_apps APP...: the APPs needing a build, one "APP<TAB>reason" per line.
stale_apps() {
    local app reason
    for app in "$@"; do
        reason=$(build_stale_reason "$app")
        [[ -z $reason ]] || printf '%s\t%s\n' "$app" "$reason"
    done
}

# build_step [--quiet] [--force] APP...: packages (no tests) the APPs that are stale, with the
# modules they need (-pl APPS -am; the whole reactor when all three). --quiet: say nothing when
# up to date (the CLI's fast path). Needs java_step first; derives MVNW_REPOURL only if it builds.
build_step() {
    local quiet="" force="" start=${EPOCHREALTIME//[!0-9]/} app line
    while [[ ${1:-} == --* ]]; do
        case $1 in
        --quiet) quiet=1 ;;
        --force) force=1 ;;
        *) die "build: unknown option $1" ;;
        esac
        shift
    done
    local -a stale=()
    if [[ -n $force ]]; then stale=("$@"); else mapfile -t stale < <(stale_apps "$@"); fi
    if ((${#stale[@]} == 0)); then
        [[ -n $quiet ]] || say "build: ok (up to date)"
        return 0
    fi
    lock_acquire "$STASIS_BUILD_DIR/build.lock" build
    if [[ -z $force ]]; then
        mapfile -t stale < <(stale_apps "$@") # another launcher may have built while we waited
        if ((${#stale[@]} == 0)); then
            [[ -n $quiet ]] || say "build: ok (up to date)"
            return 0
        fi
    fi
    local -a apps=() reasons=()
    for line in "${stale[@]}"; do
        apps+=("${line%%$'\t'*}")
        [[ $line == *$'\t'* ]] && reasons+=("${line#*$'\t'}")
    done
    ((${#reasons[@]} > 0)) || reasons=(forced)

    local -a mvn=(./mvnw -B -q -DskipTests)
    if ((${#apps[@]} < ${#STASIS_APPS[@]})); then
        mvn+=(-pl "$(IFS=,; printf '%s' "${apps[*]}")" -am)
    fi
    mvn+=(package)
    maven_repo_step quiet
    mkdir -p -- "$(dirname -- "$STASIS_BUILD_LOG")"
    : >"$STASIS_BUILD_LOG"
    say "build: ${reasons[0]}; running ${mvn[*]} (log: $STASIS_BUILD_LOG)"
    # The new stamp is taken before Maven starts: a file edited during the build stays newer.
    local new_stamp=$STASIS_BUILD_DIR/stamp.new.$$
    touch "$new_stamp"
    CLEANUP_PATHS+=("$new_stamp")
    run_logged "build: ./mvnw package" "$STASIS_BUILD_LOG" in_dir "$STASIS_ROOT" "${mvn[@]}" ||
        die "the Maven build failed (full log: $STASIS_BUILD_LOG)"
    for app in "${apps[@]}"; do
        [[ -f $(jar_of "$app") ]] ||
            die "the build succeeded but left no $app/target/stasis-$app.jar (see $STASIS_BUILD_LOG)"
        touch -r "$new_stamp" "$(stamp_of "$app")"
    done
    rm -f -- "$new_stamp"
    say "build: ok (${apps[*]} built in $(elapsed "$start"))"
}
