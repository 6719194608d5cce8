package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/lockgate/lockgate/internal/config"
	"github.com/lockgate/lockgate/workflow/lockkey"
)

func validateCommand() *command {
	return &command{
		usage: "validate [FILE...]",
		short: "check .lockgate.yaml and work-packages.yaml; errors name file:line",
		run: func(ctx context.Context, a *app, args []string) error {
			e, err := a.load(ctx)
			if err != nil {
				return err
			}
			files := args
			if len(files) == 0 {
				if e.cfg.Path != "" && e.repo.Toplevel == "" && !filepath.IsAbs(e.cfg.Path) {
					// A server's policy committed on HEAD: loading it validated it.
					fmt.Fprintf(a.stdio.Err, "ok: %s\n", e.cfg.Path)
					return nil
				}
				if e.cfg.Path != "" {
					files = append(files, e.cfg.Path)
				}
				wp := e.cfg.WorkPackages
				if !filepath.IsAbs(wp) && e.repo.Toplevel != "" {
					wp = filepath.Join(e.repo.Toplevel, wp)
				}
				if _, err := os.Stat(wp); err == nil {
					files = append(files, wp)
				}
			}
			if len(files) == 0 {
				fmt.Fprintln(a.stdio.Err, "no .lockgate.yaml or work packages file: the built-in defaults apply")
				return nil
			}
			var errs []error
			for _, f := range files {
				if err := a.validateFile(e, f); err != nil {
					errs = append(errs, err)
					continue
				}
				fmt.Fprintf(a.stdio.Err, "ok: %s\n", f)
			}
			return errors.Join(errs...)
		},
	}
}

// validateFile checks one file: a work packages file when its top level has
// `packages:`, a lockgate config otherwise.
func (a *app) validateFile(e *env, file string) error {
	// The larger of the two limits: each loader applies its own.
	data, err := config.ReadFile(e.cmdFile(file), max(config.MaxConfigBytes, config.MaxWorkPackagesBytes))
	var ce *config.Error
	if errors.As(err, &ce) {
		return err
	}
	if err != nil {
		return usagef("validate: %v", err)
	}
	if isWorkPackages(data) {
		_, err := a.loadPackages(e, file)
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

func isWorkPackages(data []byte) bool {
	for _, line := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(line, "packages:") {
			return true
		}
	}
	return false
}
