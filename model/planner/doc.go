// Package planner turns a list of pending tasks (the input of
// `lockgate plan TASKS.yaml`, docs/config.md) into a plan: for every task the lock
// keys it must hold, the keys the planner injected, and whether it can start
// now. It is pure: no I/O, no clock, no store; the caller loads the held
// locks and the rejection cooldowns and records what the plan rejected.
//
// Injected keys:
//
//   - hot:<basename> for every touched file that is a hot file
//     (scope.hot_files). An entry without '/' and without glob
//     metacharacters is a basename and matches that file in any directory
//     (src/api.py and lib/api.py share hot:api.py). Any other entry is a
//     doublestar path pattern; a touched file matching it gets
//     hot:<basename of the touched file>, so the pattern chooses which files
//     are hot and the key is still named after the file. A touched pattern
//     (src/**) gets hot:<b> for every hot entry it may cover whose last
//     element is a literal basename b; hot patterns whose last element has
//     wildcards cannot be named from a touched pattern and add nothing (the
//     path locks still overlap).
//   - file:<basename>:<hash> for every file that two or more schedulable
//     tasks (not rejected, not in cooldown) may touch, because they list it
//     in touched_paths (compared after normalization) or list a pattern
//     matching it; hash is the first 12 hex digits of the SHA-256 of the
//     normalized path. A pattern listed by two or more of them gets
//     file:<name>:<hash of the pattern>, and two different patterns that
//     may overlap (lockkey.Overlap) get file:<name>:<hash of both> (see
//     FileKey and pairKey). So two tasks share a file: key exactly when
//     they may touch a common file, and files under one pattern keep
//     different keys.
//   - backfill:type:<type> for every backfill task, so two lint backfills
//     serialize while a lint and a docs backfill run together.
//
// Backfill scope: a backfill task's touched paths are evaluated with
// scope.Compiled.Evaluate under profile "backfill" ("backfill-bridge" with
// Config.AllowBridge) for worker type "agent"; a core, profile or
// user_owned violation rejects the task. A backfill task may not declare a
// touched pattern (the scope is checked file by file, and a pattern could
// hide a core file): such a task is rejected with rule "pattern". A
// backfill task touching a path rejected fewer than Config.CooldownCycles
// cycles ago, for a backfill of its own type or of unknown type
// (Rejection), is skipped ("cooldown") before its scope is checked.
//
// Scheduling is greedy in input order: a task is ready when none of its
// locks overlaps (lockkey.Overlap semantics) a lock of a task made ready
// before it or a lock already held in the store. The locks of ready tasks
// are indexed — exact keys in a map, path patterns in pathmatch matchers,
// namespaced patterns in a short list — so planning n tasks costs about n
// times the cost of one task, not n². Shared files are found the same way:
// files in a map, matched against every touched pattern at once.
package planner
