// Package config loads lockgate's repository policy, `.lockgate.yaml` (see
// docs/config.md), and the work-package list it names (`work-packages.yaml`).
//
// Decoding is strict: unknown keys, wrong types, duplicate keys, multiple YAML
// documents and values that fail validation are all reported, every one of
// them, as a *Error whose Problems name `file:line`. A missing
// `.lockgate.yaml` means the built-in defaults (Default); a present file
// overlays them: scalars replace the default, lists replace the default list,
// mappings (locks.durations, scope.profiles) are merged key by key, and an
// explicit null (`key:` or `key: ~`) leaves the default in place.
//
// The lock keys of work packages (their ids, files and keys) are checked
// with the validators the caller passes to WorkPackages.Validate: the
// service passes lockkey's parser with the options the loaded policy sets.
package config
