// Package hookcli runs git's hooks for the binaries git's hooks call:
// `lockgate hook NAME` (package cli builds its command on Run) and the
// hook binary lockgate-hook (Main), which links the session and not the
// rest of the service. A run reads what git gives the hook, honours
// LOCKGATE_SKIP, runs the hook's contract and prints its report; the hook
// binary hands to lockgate what needs more than the session links (the
// git store, the push of the workflow branch, the server's and post-*
// hooks), with the same stdin.
package hookcli
