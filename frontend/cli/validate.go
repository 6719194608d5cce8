package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/lockgate/lockgate/service"

	"github.com/lockgate/lockgate/model/config"
	"github.com/lockgate/lockgate/model/locks/lockkey"
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
				if e.Cfg.Path != "" && e.Repo.Toplevel == "" && !filepath.IsAbs(e.Cfg.Path) {
					// A server's policy committed on HEAD: loading it validated it.
					fmt.Fprintf(a.stdio.Err, "ok: %s\n", e.Cfg.Path)
					return a.validateResult([]string{e.Cfg.Path})
				}
				if e.Cfg.Path != "" {
					files = append(files, e.Cfg.Path)
				}
				wp := e.Cfg.WorkPackages
				if !filepath.IsAbs(wp) && e.Repo.Toplevel != "" {
					wp = filepath.Join(e.Repo.Toplevel, wp)
				}
				if _, err := os.Stat(wp); err == nil {
					files = append(files, wp)
				}
			}
			if len(files) == 0 {
				fmt.Fprintln(a.stdio.Err, "no .lockgate.yaml or work packages file: the built-in defaults apply")
				return a.validateResult(nil)
			}
			var errs []error
			var ok, failed []string
			for _, f := range files {
				if err := a.validateFile(e, f); err != nil {
					errs = append(errs, err)
					failed = append(failed, f)
					continue
				}
				ok = append(ok, f)
				fmt.Fprintf(a.stdio.Err, "ok: %s\n", f)
			}
			if len(errs) > 0 {
				a.partial = map[string]any{"ok": false, "files": append([]string{}, ok...), "invalid": failed}
				return errors.Join(errs...)
			}
			return a.validateResult(ok)
		},
	}
}

// validateResult prints, under --json, what validate found valid: files ok
// (none when the built-in defaults apply).
func (a *app) validateResult(ok []string) error {
	if !a.globals.JSON {
		return nil
	}
	return writeJSON(a.stdio.Out, map[string]any{"ok": true, "files": append([]string{}, ok...), "defaults": len(ok) == 0})
}

// validateFile checks one file: a work packages file when its top level has
// `packages:`, a lockgate config otherwise.
func (a *app) validateFile(e *service.Workspace, file string) error {
	// The larger of the two limits: each loader applies its own.
	data, err := config.ReadFile(e.CmdFile(file), max(config.MaxConfigBytes, config.MaxWorkPackagesBytes))
	var ce *config.Error
	if errors.As(err, &ce) {
		return err
	}
	if err != nil {
		return service.Usagef("validate: %v", err)
	}
	if isWorkPackages(data) {
		_, err := e.LoadPackages(file)
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
