package service_test

import (
	"slices"
	"testing"

	"github.com/lockgate/lockgate/model/config"
	"github.com/lockgate/lockgate/service"
)

func TestValidate(t *testing.T) {
	tests := []struct {
		name  string
		files map[string]string // committed in the repository
		req   service.ValidateRequest
		// wantValid and wantInvalid are the files judged, relative to the
		// repository.
		wantValid, wantInvalid []string
		wantErr                any
	}{
		{name: "nothing to check: the defaults", wantValid: nil},
		{name: "the repository's files", files: map[string]string{".lockgate.yaml": "version: 1\n", "work-packages.yaml": "packages:\n  - id: WP-1\n    locks: {files: [a.py]}\n"},
			wantValid: []string{".lockgate.yaml", "work-packages.yaml"}},
		{name: "a file named", files: map[string]string{"other.yaml": "version: 1\n"}, req: service.ValidateRequest{Files: []string{"other.yaml"}},
			wantValid: []string{"other.yaml"}},
		{name: "an invalid config", files: map[string]string{"bad.yaml": "version: 1\nbogus: true\n"}, req: service.ValidateRequest{Files: []string{"bad.yaml"}},
			wantInvalid: []string{"bad.yaml"}, wantErr: new(*config.Error)},
		{name: "a key rule under the file's own namespaces", files: map[string]string{"ns.yaml": "version: 1\nlocks: {namespaces: [db]}\nscope:\n  key_rules:\n    - {paths: [a.py], keys: ['db:migration-slot']}\n"},
			req: service.ValidateRequest{Files: []string{"ns.yaml"}}, wantValid: []string{"ns.yaml"}},
		{name: "a key rule outside them", files: map[string]string{"ns.yaml": "version: 1\nlocks: {namespaces: [api]}\nscope:\n  key_rules:\n    - {paths: [a.py], keys: ['db:migration-slot']}\n"},
			req: service.ValidateRequest{Files: []string{"ns.yaml"}}, wantInvalid: []string{"ns.yaml"}, wantErr: new(*config.Error)},
		{name: "invalid package ids, one good file", files: map[string]string{".lockgate.yaml": "version: 1\n", "work-packages.yaml": "packages:\n  - id: 'bad id'\n"},
			wantValid: []string{".lockgate.yaml"}, wantInvalid: []string{"work-packages.yaml"}, wantErr: new(*config.Error)},
		{name: "no such file", req: service.ValidateRequest{Files: []string{"missing.yaml"}},
			wantInvalid: []string{"missing.yaml"}, wantErr: new(*service.UsageError)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := repoWith(t, tt.files)
			v, err := loadAs(t, r.Dir, "alice", nil).Validate(tt.req)
			wantError(t, err, tt.wantErr)
			rel := func(files []string) []string {
				var out []string
				for _, f := range files {
					out = append(out, relTo(r.Dir, f))
				}
				return out
			}
			if got := rel(v.Valid); !slices.Equal(got, tt.wantValid) {
				t.Errorf("valid %q, want %q", got, tt.wantValid)
			}
			if got := rel(v.Invalid); !slices.Equal(got, tt.wantInvalid) {
				t.Errorf("invalid %q, want %q", got, tt.wantInvalid)
			}
		})
	}
}
