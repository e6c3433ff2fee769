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

# The functions below are on the CLI's fast path, where every fork costs milliseconds: they set
# globals instead of printing into command substitutions, and run one process in all (find).

# build_stale_reason APP: sets STALE_REASON to why APP needs a build, or to "" when it does not.
STALE_REASON=""
build_stale_reason() {
    local app=$1 stamp=$STASIS_BUILD_DIR/stamp.$1 changed module
    STALE_REASON=""
    [[ -f $STASIS_ROOT/$app/target/stasis-$app.jar ]] || { STALE_REASON="$app/target/stasis-$app.jar is missing"; return 0; }
    [[ -f $stamp ]] || { STALE_REASON="no previous build of $app"; return 0; }
    # Only what goes into the jar counts: poms and main sources (not tests). The CLI is built from
    # the modules it depends on and itself alone (read from the poms), so edits elsewhere never
    # rebuild it.
    local -a roots=("$STASIS_ROOT")
    if [[ $app == cli ]]; then
        roots=("$STASIS_ROOT/pom.xml" "$STASIS_ROOT/.mvn" "$STASIS_ROOT/mvnw")
        module_closure cli
        for module in "${MODULES[@]}"; do roots+=("$STASIS_ROOT/$module"); done
    fi
    changed=$(find "${roots[@]}" -mindepth 0 \
        \( -name target -o -name .git -o -name .build -o -name .idea -o -name node_modules \) -prune -o \
        \( -name pom.xml -o -path '*/src/main' -o -path '*/src/main/*' -o -path "$STASIS_ROOT/.mvn" \
        -o -path "$STASIS_ROOT/.mvn/*" -o -path "$STASIS_ROOT/mvnw" \) \
        -newer "$stamp" -print -quit 2>/dev/null || true)
    [[ -z $changed ]] || STALE_REASON="${changed#"$STASIS_ROOT"/} changed"
}

# module_closure MODULE: sets MODULES to MODULE and every module of this build it needs at run
# time (its non-test dependencies on stasis-* artifacts, transitively), as directory names.
MODULES=()
module_closure() {
    local -A seen=()
    local -a queue=("$1")
    local module line dep
    local re='<dependency>.*<artifactId>stasis-([a-z0-9-]+)</artifactId>'
    MODULES=()
    while ((${#queue[@]})); do
        module=${queue[0]}
        queue=("${queue[@]:1}")
        [[ -n ${seen[$module]:-} ]] && continue
        seen[$module]=1
        MODULES+=("$module")
        while IFS= read -r line; do
            [[ $line =~ $re ]] || continue
            [[ $line == *'<scope>test</scope>'* || $line == *'<type>test-jar</type>'* ]] && continue
            dep=${BASH_REMATCH[1]}
            [[ -f $STASIS_ROOT/$dep/pom.xml && -z ${seen[$dep]:-} ]] && queue+=("$dep")
        done <"$STASIS_ROOT/$module/pom.xml"
    done
}

# stale_apps APP...: sets STALE to the APPs needing a build, each as "APP<TAB>reason".
STALE=()
stale_apps() {
    local app
    STALE=()
    for app in "$@"; do
        build_stale_reason "$app"
        [[ -z $STALE_REASON ]] || STALE+=("$app"$'\t'"$STALE_REASON")
    done
}

BUILT_APPS=() # what the last build_step built

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
    if [[ -n $force ]]; then stale=("$@"); else stale_apps "$@" && stale=("${STALE[@]}"); fi
    if ((${#stale[@]} == 0)); then
        [[ -n $quiet ]] || say "build: ok (up to date)"
        return 0
    fi
    lock_acquire "$STASIS_BUILD_DIR/build.lock" build
    if [[ -z $force ]]; then
        stale_apps "$@" # another launcher may have built while we waited
        stale=("${STALE[@]}")
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
        touch -r "$new_stamp" "$STASIS_BUILD_DIR/stamp.$app"
    done
    rm -f -- "$new_stamp"
    BUILT_APPS=("${apps[@]}")
    say "build: ok (${apps[*]} built in $(elapsed "$start"))"
}
