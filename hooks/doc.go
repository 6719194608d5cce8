// Package hooks implements git's hook contracts for lockgate and the checks
// they share with `lockgate check`:
//
//   - pre-commit: no arguments; the staged change is what
//     `git diff --cached` shows with the index git names in GIT_INDEX_FILE
//     (a temporary index for `git commit -a` and `git commit <paths>`).
//   - commit-msg: one argument, the file holding the proposed message.
//   - pre-push: arguments <remote name> <remote URL>; stdin lines
//     `<local ref> SP <local sha> SP <remote ref> SP <remote sha> LF`, an
//     all-zero sha for a ref that does not exist on that side. The
//     pre-commit framework instead sets PRE_COMMIT_FROM_REF and
//     PRE_COMMIT_TO_REF and passes no stdin.
//   - pre-receive (on the server): stdin lines
//     `<old-value> SP <new-value> SP <ref-name> LF`.
//
// The service's Workspace methods of the same names (PreCommit,
// PreMergeCommit, CommitMsg, PrePush, PreReceive) take what git gives a
// hook — arguments, stdin, environment — and run these with the policy,
// store and identity of the request.
//
// A refusal is data: a Report with Violations. An error means the hook
// could not decide (git failed, store down), and the caller fails closed.
package hooks
