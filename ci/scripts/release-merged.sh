#!/bin/sh
# release-merged.sh BEFORE AFTER [BRANCH]: after a push to BRANCH moved it
# from BEFORE to AFTER, release the locks whose holder's work is now on it
# (locks.release_on_merge; docs/locks.md, "Released when the work lands").
# The GitHub Action (action.yml, on a push) and the GitLab template
# (ci/gitlab/lockgate.gitlab-ci.yml, on the default branch) run this
# script; cmd/lockgate/ciscripts_test.go tests it.
#
# The job needs the whole history and every branch (GitHub: checkout with
# fetch-depth: 0; GitLab: GIT_DEPTH 0): a lock stays while its holder has
# commits on its paths on another branch, and a clone that lacks those
# branches cannot see them. The releases are logged as the worker running
# the job (LOCKGATE_WORKER).
#
# Exit: 0 when done (also when locks.release_on_merge is off, or BEFORE is
# the all-zero name of a new branch: nothing landed on a branch that
# was there); 2 on usage; else lockgate's exit code.
set -u

before=${1:-}
after=${2:-}
branch=${3:-}
if [ -z "$before" ] || [ -z "$after" ]; then
	echo "usage: release-merged.sh BEFORE AFTER [BRANCH]" >&2
	exit 2
fi
case $before in
*[!0]*) ;;
*)
	echo "lockgate: $after starts a new branch: no lock released" >&2
	exit 0
	;;
esac
if [ -n "$branch" ]; then
	exec lockgate release-merged --range "$before..$after" --branch "$branch"
fi
exec lockgate release-merged --range "$before..$after"
