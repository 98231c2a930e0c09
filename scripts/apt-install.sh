#!/usr/bin/env bash
# apt-install.sh WHO PACKAGE...: installs Debian's packages for WHO (the
# script that asks, named in what it prints), when root and apt-get allow;
# otherwise it says what is missing. It never fails: whoever needs a
# package checks for it, and its tests skip locally and fail in CI.
who=$1
shift
(($#)) || exit 0
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
	echo "$who: installing $* from Debian"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq >/dev/null 2>&1 || true
	apt-get install -y -qq --no-install-recommends "$@" >/dev/null ||
		echo "$who: could not install $*; the tests that need them will skip (and fail in CI)"
else
	echo "$who: $* missing and cannot be installed here (needs root and apt-get); the tests that need them will skip"
fi
exit 0
