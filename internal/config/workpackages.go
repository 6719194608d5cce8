package config

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"unicode"

	"go.yaml.in/yaml/v3"

	"github.com/lockgate/lockgate/locks"
)

// WorkPackages is a parsed work-packages.yaml.
type WorkPackages struct {
	Packages []WorkPackage `yaml:"packages"`
	// Path is the file the list was loaded from.
	Path string `yaml:"-"`
}

// WorkPackage is one claimable unit of work and the locks it needs.
type WorkPackage struct {
	ID    string       `yaml:"id"`
	Title string       `yaml:"title"`
	Locks PackageLocks `yaml:"locks"`
	// Line is where the package's entry starts in Path.
	Line int `yaml:"-"`

	idLine              int
	fileLines, keyLines []int
}

// PackageLocks are the locks a work package takes, all or nothing.
type PackageLocks struct {
	Files []string `yaml:"files"` // paths or doublestar patterns
	Keys  []string `yaml:"keys"`  // logical keys (api:, db:, …)
	// TTLMinutes overrides the default TTL; 0 means the default.
	TTLMinutes int    `yaml:"ttl_minutes"`
	Reason     string `yaml:"reason"`
}

// LoadWorkPackages reads and checks a work-packages file. Problems in it
// (unknown keys, wrong types, empty or duplicate ids, negative ttl_minutes)
// are reported as a *Error; a missing file is an error wrapping
// fs.ErrNotExist.
func LoadWorkPackages(path string) (*WorkPackages, error) {
	data, err := ReadFile(path, MaxWorkPackagesBytes)
	if err != nil {
		var ce *Error
		if errors.As(err, &ce) {
			return nil, err
		}
		return nil, fmt.Errorf("read work packages: %w", err)
	}
	return LoadWorkPackagesBytes(path, data)
}

// LoadWorkPackagesBytes parses data as the work-packages file named name.
func LoadWorkPackagesBytes(name string, data []byte) (*WorkPackages, error) {
	if name == "" {
		name = "<input>"
	}
	if err := checkSize(name, data, MaxWorkPackagesBytes); err != nil {
		return nil, err
	}
	ps := &problems{file: name}
	w := &WorkPackages{Path: name}
	d := newDecoder(ps)
	if root := parseDocument(ps, data); root != nil {
		if list := packagesNode(root); list != nil && len(list.Content) > MaxWorkPackages {
			ps.add(list.Line, list.Column, "packages: %s packages, more than the %s lockgate reads", thousands(len(list.Content)), thousands(MaxWorkPackages))
			return nil, ps.err()
		}
		d.decode(root, reflect.ValueOf(w).Elem(), "")
	}
	vs := &problems{file: name}
	firstLine := map[string]int{}
	for i := range w.Packages {
		p := &w.Packages[i]
		at := fmt.Sprintf("packages[%d]", i)
		p.Line = d.pos[at]
		p.idLine = lineOr(d.pos[at+".id"], p.Line)
		p.fileLines = entryLines(d.pos, at+".locks.files", len(p.Locks.Files))
		p.keyLines = entryLines(d.pos, at+".locks.keys", len(p.Locks.Keys))
		switch {
		case strings.TrimSpace(p.ID) == "":
			vs.add(p.Line, 0, "%s: id must not be empty", at)
		case strings.ContainsFunc(p.ID, unicode.IsSpace):
			vs.add(lineOr(d.pos[at+".id"], p.Line), 0, "%s: id %s must not contain whitespace", at, quote(p.ID))
		default:
			if first, dup := firstLine[p.ID]; dup {
				vs.add(lineOr(d.pos[at+".id"], p.Line), 0, "duplicate package id %s (first defined at line %d)", quote(p.ID), first)
			} else {
				firstLine[p.ID] = lineOr(d.pos[at+".id"], p.Line)
			}
		}
		for j, f := range p.Locks.Files {
			if strings.TrimSpace(f) == "" {
				vs.add(lineOr(p.fileLines[j], p.Line), 0, "%s.locks.files[%d]: empty entry", at, j)
			}
		}
		for j, k := range p.Locks.Keys {
			if strings.TrimSpace(k) == "" {
				vs.add(lineOr(p.keyLines[j], p.Line), 0, "%s.locks.keys[%d]: empty entry", at, j)
			}
		}
		// The id names the task lock and the title or reason becomes the
		// locks' reason: both must fit a lock record.
		if len(p.ID) > locks.MaxTaskIDLen {
			vs.add(lineOr(d.pos[at+".id"], p.Line), 0, "%s: id longer than %d bytes", at, locks.MaxTaskIDLen)
		}
		if len(p.Locks.Reason) > locks.MaxReasonLen {
			vs.add(lineOr(d.pos[at+".locks.reason"], p.Line), 0, "%s.locks.reason: longer than %d bytes", at, locks.MaxReasonLen)
		}
		if len(p.Title) > locks.MaxReasonLen && p.Locks.Reason == "" {
			vs.add(lineOr(d.pos[at+".title"], p.Line), 0, "%s.title: longer than %d bytes (it is the locks' reason when locks.reason is empty)", at, locks.MaxReasonLen)
		}
		if p.Locks.TTLMinutes < 0 {
			vs.add(lineOr(d.pos[at+".locks.ttl_minutes"], p.Line), 0, "package %s: locks.ttl_minutes must not be negative, got %d", p.ID, p.Locks.TTLMinutes)
		}
	}
	ps.merge(vs)
	if err := ps.err(); err != nil {
		return nil, err
	}
	return w, nil
}

// packagesNode is the packages: list of a work packages document, or nil.
func packagesNode(root *yaml.Node) *yaml.Node {
	if root.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(root.Content); i += 2 {
		if root.Content[i].Value == "packages" && root.Content[i+1].Kind == yaml.SequenceNode {
			return root.Content[i+1]
		}
	}
	return nil
}

func entryLines(pos map[string]int, path string, n int) []int {
	lines := make([]int, n)
	for i := range lines {
		lines[i] = pos[fmt.Sprintf("%s[%d]", path, i)]
	}
	return lines
}

func lineOr(line, fallback int) int {
	if line > 0 {
		return line
	}
	return fallback
}

// Find returns the package with the given id.
func (w *WorkPackages) Find(id string) (*WorkPackage, bool) {
	for i := range w.Packages {
		if w.Packages[i].ID == id {
			return &w.Packages[i], true
		}
	}
	return nil, false
}

// Validate runs checkID (the caller's check that an id names a task lock;
// nil for none) on every package id and check (the caller's lock-key
// validator) on every file and key of every package, and reports each
// failure with the line of its entry as a *Error; nil when all pass.
func (w *WorkPackages) Validate(checkID, check func(key string) error) error {
	name := w.Path
	if name == "" {
		name = "<input>"
	}
	ps := &problems{file: name}
	for i := range w.Packages {
		p := &w.Packages[i]
		if checkID != nil {
			if err := checkID(p.ID); err != nil {
				ps.add(lineOr(p.idLine, p.Line), 0, "package id %s: %v", quote(p.ID), err)
			}
		}
		for j, f := range p.Locks.Files {
			if err := check(f); err != nil {
				ps.add(lineAt(p.fileLines, j, p.Line), 0, "package %s: locks.files[%d]: %v", p.ID, j, err)
			}
		}
		for j, k := range p.Locks.Keys {
			if err := check(k); err != nil {
				ps.add(lineAt(p.keyLines, j, p.Line), 0, "package %s: locks.keys[%d]: %v", p.ID, j, err)
			}
		}
	}
	return ps.err()
}

func lineAt(lines []int, i, fallback int) int {
	if i < len(lines) && lines[i] > 0 {
		return lines[i]
	}
	return fallback
}
