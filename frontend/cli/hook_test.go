package cli

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/lockgate/lockgate/service"
	"github.com/lockgate/lockgate/service/outcome"
)

// TestFinishReport: a report prints as its format asks, and its verdict is
// the exit code: 0 a pass, 1 a refusal, 3 nothing refused but not judged.
func TestFinishReport(t *testing.T) {
	refused := service.Report{Hook: "check", Violations: []service.Violation{{Rule: "locked", Path: "a.go", Reason: "locked by bob"}}}
	undecided := service.Report{Hook: "verify"}
	for _, tc := range []struct {
		name, format string
		json         bool
		r            service.Report
		code         int // 0: no error
		out, err     string
	}{
		{name: "a pass", format: "text", r: service.Report{Hook: "check", OK: true}},
		{name: "a refusal", format: "text", r: refused, code: outcome.ExitPolicy, err: "a.go"},
		{name: "a refusal as json", format: "json", r: refused, code: outcome.ExitPolicy, out: `"rule": "locked"`},
		{name: "--json", format: "text", json: true, r: refused, code: outcome.ExitPolicy, out: `"path": "a.go"`},
		{name: "github annotations", format: "github", r: refused, code: outcome.ExitPolicy, out: "::error", err: "a.go"},
		{name: "not judged", format: "text", r: undecided, code: outcome.ExitUnavailable},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			a := &app{stdio: Stdio{Out: &out, Err: &errOut}, globals: Globals{JSON: tc.json}, styled: true}
			r := tc.r
			err := a.finishReport(&r, "change", tc.format)
			var exit *outcome.ExitError
			switch {
			case tc.code == 0 && err != nil:
				t.Fatalf("err = %v, want a pass", err)
			case tc.code != 0 && (!errors.As(err, &exit) || exit.Code != tc.code):
				t.Fatalf("err = %v, want exit %d", err, tc.code)
			}
			if !strings.Contains(out.String(), tc.out) || !strings.Contains(errOut.String(), tc.err) {
				t.Fatalf("stdout %q, stderr %q: want %q and %q", out.String(), errOut.String(), tc.out, tc.err)
			}
			if (tc.json || tc.format == "json") && errOut.Len() > 0 {
				t.Fatalf("json output also wrote stderr %q", errOut.String())
			}
		})
	}
}

func TestReportFormat(t *testing.T) {
	for f, ok := range map[string]bool{"text": true, "json": true, "github": true, "xml": false, "": false} {
		var usage *service.UsageError
		if err := reportFormat("check", f); (err == nil) != ok || !ok && !errors.As(err, &usage) {
			t.Errorf("reportFormat(%q) = %v", f, err)
		}
	}
}
