package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// The binary is linked with dead code elimination whole: nothing reaches
// text/template's execution (its reflection on method names would keep
// every exported method of every type, 10 MB more to load for each hook).
// Cobra's help, usage and version templates are what would bring it in.
func TestNoTemplateExecution(t *testing.T) {
	out, err := exec.Command("go", "tool", "nm", lockgateBinaryUnstripped(t)).Output()
	if err != nil {
		t.Fatalf("go tool nm: %v", err)
	}
	if strings.Contains(string(out), "text/template.(*state).evalCall") {
		t.Fatal("the binary links text/template's execution: something calls a template (cobra's SetUsageTemplate, SetHelpTemplate or SetVersionTemplate?)")
	}
}

var (
	unstrippedOnce sync.Once
	unstrippedBin  string
	unstrippedErr  error
)

// lockgateBinaryUnstripped builds the binary with its symbol table, once.
func lockgateBinaryUnstripped(t *testing.T) string {
	unstrippedOnce.Do(func() {
		dir, err := os.MkdirTemp("", "lockgate-nm")
		if err != nil {
			unstrippedErr = err
			return
		}
		unstrippedBin = filepath.Join(dir, "lockgate")
		cmd := exec.Command("go", "build", "-trimpath", "-o", unstrippedBin, ".")
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			unstrippedErr = fmt.Errorf("go build: %v: %s", err, out)
		}
	})
	if unstrippedErr != nil {
		t.Fatal(unstrippedErr)
	}
	return unstrippedBin
}
