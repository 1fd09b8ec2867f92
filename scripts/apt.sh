# Shared by the scripts/install-*.sh installers (source it, do not run it): one way to install
# Debian packages for the project, quietly, idempotently, and with one clear message on failure.
#
#   TOOL=install-x; source scripts/apt.sh; apt_ensure CHECK "what it is" PKG...
#
# CHECK is a shell function that succeeds when the tool already works; apt_ensure returns at once
# then, without touching apt. Otherwise it installs PKG... with apt-get (as root, or through
# passwordless sudo), running `apt-get update` only if the first attempt fails (package lists are
# often fresh enough, and update is the slow part), and checks CHECK again.

log() { printf '%s: %s\n' "${TOOL:-install}" "$*" >&2; }

apt_ensure() {
    local check=$1 what=$2
    shift 2
    if "$check"; then
        return 0
    fi
    if ! command -v apt-get >/dev/null 2>&1; then
        log "$what is not installed and apt-get is unavailable on this machine."
        log "Install the Debian package(s) $* by hand."
        return 1
    fi
    local sudo=()
    if [[ $(id -u) -ne 0 ]]; then
        if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
            sudo=(sudo -n)
        else
            log "installing $what (Debian package(s) $*) needs root or passwordless sudo."
            log "Run: sudo apt-get install -y $*"
            return 1
        fi
    fi
    local apt_log
    apt_log=$(mktemp)
    if ! DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -q \
        --no-install-recommends "$@" >"$apt_log" 2>&1; then
        if ! { DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get update -q >"$apt_log" 2>&1 &&
            DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -q \
                --no-install-recommends "$@" >"$apt_log" 2>&1; }; then
            log "apt-get could not install $*; last lines of its output:"
            tail -n 20 "$apt_log" >&2
            rm -f "$apt_log"
            return 1
        fi
    fi
    rm -f "$apt_log"
    if ! "$check"; then
        log "$* installed but $what does not run."
        return 1
    fi
}
