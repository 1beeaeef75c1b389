# tests/real/recipes/lib.sh - helpers sourced by the recipes in this folder
# (bash, set -euo pipefail in the caller).  Not executable on its own.
#
# get_source exports one tree of an upstream git repository at a pinned
# tag or commit.  Two ways to get the objects:
#   * a local git repository given by the caller's mirror variable
#     (HTC_MIRROR, BOINC_MIRROR): a clone or bare mirror with the pinned
#     tag or commit; nothing is downloaded;
#   * else a bare cache repository under /opt (HTC_GIT_CACHE,
#     BOINC_GIT_CACHE) into which only the pinned tag or commit is fetched
#     from the public upstream URL, once (depth 1).

# shellcheck shell=bash

rlog() { printf '[%s] %s: %s\n' "$(date -u +%H:%M:%S)" "${RECIPE:-recipe}" "$*"; }
rdie() { printf '%s: %s\n' "${RECIPE:-recipe}" "$*" >&2; exit 2; }

# Root's PATH may hold shims (pyenv's python2 that fails to run broke
# HTCondor's CMake python probe once): builds run with a plain PATH.
# shellcheck disable=SC2034  # used by the recipes that source this file
CLEAN_PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin

# apt_missing PKG...: install those of the Debian packages that are not
# installed (never upgrade what is there).  Waits up to 15 minutes for
# another apt's lock; on failure, refreshes the package lists once.
apt_missing() {
    local p missing=()
    for p in "$@"; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' ||
            missing+=("$p")
    done
    if [ ${#missing[@]} = 0 ]; then rlog "packages: all present"; return; fi
    rlog "packages: installing ${missing[*]}"
    local apt=(env DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=900)
    "${apt[@]}" install -y -q --no-install-recommends "${missing[@]}" ||
        { "${apt[@]}" update -q && "${apt[@]}" install -y -q --no-install-recommends "${missing[@]}"; }
}

# get_source URL MIRROR_VAR REF CACHE DEST [EXCLUDE_PATH...]
#   URL        public upstream repository (used only without a mirror)
#   MIRROR_VAR name of the variable holding a local repository, or empty
#   REF        tag name or full commit id
#   CACHE      bare repository the pinned ref is fetched into
#   DEST       directory the tree is extracted into (created)
#   EXCLUDE    paths left out of the export (see the HTCondor recipes)
get_source() {
    local url=$1 mirror_var=$2 ref=$3 cache=$4 dest=$5
    shift 5
    local mirror=${!mirror_var:-} repo
    if [ -n "$mirror" ]; then
        git -C "$mirror" rev-parse --git-dir > /dev/null 2>&1 ||
            rdie "$mirror_var=$mirror is not a git repository (it must be a local clone or bare mirror of $url)"
        git -C "$mirror" rev-parse -q --verify "$ref^{commit}" > /dev/null ||
            rdie "$mirror_var=$mirror has no $ref (update it: git -C $mirror fetch --tags $url)"
        repo=$mirror
        rlog "source: $ref from $mirror_var=$mirror"
    else
        repo=$cache
        if ! { [ -f "$repo/HEAD" ] && git --git-dir="$repo" rev-parse -q --verify "$ref^{commit}" > /dev/null 2>&1; }; then
            mkdir -p "$repo"
            # (a bare repository of its own, even inside another checkout)
            [ -f "$repo/HEAD" ] || git init -q --bare "$repo"
            rlog "source: fetching $ref of $url into $repo (no $mirror_var given)"
            local spec=$ref
            [[ $ref =~ ^[0-9a-f]{40}$ ]] || spec="refs/tags/$ref:refs/tags/$ref"
            git --git-dir="$repo" fetch -q --depth 1 "$url" "$spec" ||
                rdie "cannot fetch $ref from $url (no network?  set $mirror_var to a local clone that has it)"
            git --git-dir="$repo" rev-parse -q --verify "$ref^{commit}" > /dev/null ||
                rdie "$url gave no $ref"
        fi
    fi
    mkdir -p "$dest"
    local pathspec=(-- .) x
    for x in "$@"; do pathspec+=(":(exclude)$x"); done
    # Checked here, not left to the caller's set -e: boinc_server.sh calls
    # get_source on the left of ||, where set -e does not apply, and a
    # failed export would otherwise leave a partial tree that later runs
    # take for a whole one.  (An excluded path whose blob a mirror lacks
    # makes git print "error: invalid object ..." and still exit 0 with
    # every other file exported.)
    git -C "$repo" archive --format=tar "$ref" "${pathspec[@]}" | tar -x -C "$dest" ||
        rdie "source: exporting $ref into $dest failed (remove $dest before trying again)"
    rlog "source: $ref -> $dest"
}

# replace_file SRC DEST: leave DEST alone when identical, else copy beside
# it and rename over it.  Never write into the old inode: running daemons
# map the installed binaries and libraries (a library overwritten in place
# crashed a running condor_master within a second), and a new mtime on
# condor_master makes a running master restart itself.
replace_file() {
    cmp -s "$1" "$2" && return 0
    cp -a "$1" "$2.new.$$"
    mv -f "$2.new.$$" "$2"
}
