package service

import (
	"errors"
	"os"
	"path/filepath"
	"strings"

	"github.com/lockgate/lockgate/model/config"
	"github.com/lockgate/lockgate/model/locks/lockkey"
)

// ValidateRequest is `validate`: the files to check (relative to the
// working directory), or none for the repository's .lockgate.yaml and its
// work packages file.
type ValidateRequest struct{ Files []string }

// Validation is what `validate` found: the files that are valid and those
// that are not, in the order checked. Neither: there was no file to
// check, and the built-in defaults apply.
type Validation struct {
	Valid, Invalid []string
}

// Validate checks each file: a work packages file when its top level has
// `packages:`, a lockgate config otherwise. The error joins every invalid
// file's problems (each naming file:line).
func (e *Workspace) Validate(req ValidateRequest) (*Validation, error) {
	files := req.Files
	if len(files) == 0 {
		if e.Cfg.Path != "" && e.WorkTree() == "" && !filepath.IsAbs(e.Cfg.Path) {
			// A server's policy committed on HEAD: loading it validated it.
			return &Validation{Valid: []string{e.Cfg.Path}}, nil
		}
		files = e.policyFiles()
	}
	v := &Validation{}
	var errs []error
	for _, f := range files {
		if err := e.validateFile(f); err != nil {
			errs = append(errs, err)
			v.Invalid = append(v.Invalid, f)
			continue
		}
		v.Valid = append(v.Valid, f)
	}
	return v, errors.Join(errs...)
}

// policyFiles are the repository's .lockgate.yaml and work packages file,
// those that exist.
func (e *Workspace) policyFiles() []string {
	var files []string
	if e.Cfg.Path != "" {
		files = append(files, e.Cfg.Path)
	}
	wp := e.Cfg.WorkPackages
	if !filepath.IsAbs(wp) && e.WorkTree() != "" {
		wp = filepath.Join(e.WorkTree(), wp)
	}
	if _, err := os.Stat(wp); err == nil {
		files = append(files, wp)
	}
	return files
}

// validateFile checks one file, as Validate says.
func (e *Workspace) validateFile(file string) error {
	// The larger of the two limits: each loader applies its own.
	data, err := config.ReadFile(e.CmdFile(file), max(config.MaxConfigBytes, config.MaxWorkPackagesBytes))
	var ce *config.Error
	if errors.As(err, &ce) {
		return err
	}
	if err != nil {
		return Usagef("validate: %v", err)
	}
	if isWorkPackages(data) {
		_, err := e.Queue().LoadPackages(file)
		return err
	}
	cfg, err := config.LoadBytes(file, data)
	if err != nil {
		return err
	}
	// Keys in key_rules must be valid under the file's own namespaces.
	opts := &lockkey.Options{Namespaces: cfg.Locks.Namespaces, FeaturePurposes: cfg.Locks.FeaturePurposes,
		ContractFiles: append(append([]string(nil), cfg.Contracts.OpenAPI.Files...), cfg.Contracts.Generated...)}
	return cfg.ValidateKeys(func(k string) error {
		_, err := lockkey.Parse(k, opts)
		return err
	})
}

// isWorkPackages reports a file whose top level has `packages:`.
func isWorkPackages(data []byte) bool {
	for _, line := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(line, "packages:") {
			return true
		}
	}
	return false
}
