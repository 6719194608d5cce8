#!/bin/sh
# pr-check.sh BASE [HEAD]: judge the commits BASE..HEAD of a pull or merge
# request as lockgate's hooks would have, and prove them against the lock
# log. The GitHub Action (action.yml) and the GitLab template
# (ci/gitlab/lockgate.gitlab-ci.yml) both run this script, so the commands
# tested in cmd/lockgate/ciscripts_test.go are the ones CI runs.
#
# BASE and HEAD come as arguments, else from LOCKGATE_BASE and
# LOCKGATE_HEAD; HEAD defaults to HEAD. The CI system's own variables are
# resolved by its configuration, not here, so the script runs the same on
# any of them and on a workstation.
#
# Who is judged: commits without lockgate trailers are judged as the
# worker running the check (LOCKGATE_WORKER, LOCKGATE_WORKER_TYPE; in CI,
# an agent, the stricter type). Commits whose trailers name another worker
# than the pusher (LOCKGATE_PUSHER, mapped by trust.pushers) are refused
# unless that worker signed them.
#
# Exit: 0 when both pass; otherwise the exit code of the first of check and
# verify that failed (1 violations, 2 usage, 3 undecided: docs/exit-codes.md).
# Both always run, so every annotation is printed.
set -u

base=${1:-${LOCKGATE_BASE:-}}
head=${2:-${LOCKGATE_HEAD:-HEAD}}
if [ -z "$base" ]; then
	echo "usage: pr-check.sh BASE [HEAD] (or LOCKGATE_BASE, LOCKGATE_HEAD)" >&2
	exit 2
fi
range="$base..$head"

# A clone with a remote fetches the workflow branch (the lock log) before
# verifying: a CI checkout has only the branches it was asked for. A
# repository without remotes has its log locally, and nothing to fetch it from.
fetch=
if [ -n "$(git remote)" ]; then
	fetch=--fetch
fi

status=0
lockgate check --range "$range" --format github || status=$?
verified=0
lockgate verify $fetch --range "$range" --format github || verified=$?
if [ "$status" -eq 0 ]; then
	status=$verified
fi
exit "$status"
