package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestPublicAPIUsesNoInternalTypes: the packages outside internal/ are
// lockgate's Go API (docs/architecture.md). A type of an internal package
// in one of their exported declarations would make that part unusable to
// any other module, so none may name one. The builders of this module's
// own test fixtures (a package named …test under service/, such as
// service/queue/queuetest) are not API: they hand the tests gittest's
// repositories.
func TestPublicAPIUsesNoInternalTypes(t *testing.T) {
	t.Parallel()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	err = filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		if d.IsDir() {
			switch {
			case rel == "internal", rel == "cmd", isFixtureBuilder(rel), rel == "bench", d.Name() == "testdata", strings.HasPrefix(d.Name(), "."):
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		checked++
		for _, p := range internalTypesIn(t, path) {
			t.Errorf("%s: exported %s", filepath.ToSlash(rel), p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked < 50 {
		t.Fatalf("checked %d files; the walk missed the packages", checked)
	}
}

// internalTypesIn lists the exported declarations of file that name a
// type of an internal package.
func internalTypesIn(t *testing.T, file string) []string {
	f, err := parser.ParseFile(token.NewFileSet(), file, nil, parser.SkipObjectResolution)
	if err != nil {
		t.Fatal(err)
	}
	internal := map[string]string{} // local name -> import path
	for _, im := range f.Imports {
		p, _ := strconv.Unquote(im.Path.Value)
		if !strings.Contains(p, "/internal/") {
			continue
		}
		name := p[strings.LastIndex(p, "/")+1:]
		if im.Name != nil {
			name = im.Name.Name
		}
		internal[name] = p
	}
	if len(internal) == 0 {
		return nil
	}
	var found []string
	names := func(what string, n ast.Node) {
		ast.Inspect(n, func(n ast.Node) bool {
			if sel, ok := n.(*ast.SelectorExpr); ok {
				if id, ok := sel.X.(*ast.Ident); ok && internal[id.Name] != "" {
					found = append(found, what+" names "+internal[id.Name]+"."+sel.Sel.Name)
				}
			}
			return true
		})
	}
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			if !d.Name.IsExported() || d.Recv != nil && !exportedRecv(d.Recv) {
				continue
			}
			names("func "+d.Name.Name, d.Type)
		case *ast.GenDecl:
			for _, s := range d.Specs {
				switch s := s.(type) {
				case *ast.TypeSpec:
					if s.Name.IsExported() {
						exportedFields(s.Type, func(n ast.Node) { names("type "+s.Name.Name, n) })
					}
				case *ast.ValueSpec:
					for _, n := range s.Names {
						if n.IsExported() && s.Type != nil {
							names("var "+n.Name, s.Type)
						}
					}
				}
			}
		}
	}
	return found
}

func exportedRecv(r *ast.FieldList) bool {
	x := r.List[0].Type
	if s, ok := x.(*ast.StarExpr); ok {
		x = s.X
	}
	if g, ok := x.(*ast.IndexExpr); ok {
		x = g.X
	}
	id, ok := x.(*ast.Ident)
	return ok && id.IsExported()
}

// exportedFields calls visit with what an exported type shows: the
// exported fields and methods of a struct or interface, else the type.
func exportedFields(typ ast.Expr, visit func(ast.Node)) {
	var fields *ast.FieldList
	switch st := typ.(type) {
	case *ast.StructType:
		fields = st.Fields
	case *ast.InterfaceType:
		fields = st.Methods
	default:
		visit(typ)
		return
	}
	for _, fl := range fields.List {
		exported := len(fl.Names) == 0 // embedded
		for _, n := range fl.Names {
			exported = exported || n.IsExported()
		}
		if exported {
			visit(fl.Type)
		}
	}
}

// TestFrontEndsUseCases: a front end changes the lock table only through
// the service's use cases, which journal what they do; the raw store the
// service hands out for seeding (Workspace.LockStore) is not for them.
func TestFrontEndsUseCases(t *testing.T) {
	t.Parallel()
	root := filepath.Join("..", "..", "frontend")
	checked := 0
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return err
		}
		checked++
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if strings.Contains(string(data), ".LockStore()") {
			t.Errorf("%s calls Workspace.LockStore: go through a service use case", filepath.ToSlash(path))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked < 20 {
		t.Fatalf("checked %d files; the walk missed the front ends", checked)
	}
}

// isFixtureBuilder reports whether the directory rel (from the module's
// root) holds a builder of the service's test fixtures.
func isFixtureBuilder(rel string) bool {
	rel = filepath.ToSlash(rel)
	return strings.HasPrefix(rel, "service/") && strings.HasSuffix(rel, "test")
}
