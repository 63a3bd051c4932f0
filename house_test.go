package main

import (
	"go/ast"
	goparser "go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// maxFuncLines is the longest a function's body may be: past it, a
// function is a list of steps that want names of their own.
const maxFuncLines = 80

// sourceFiles parses every non-test Go file of the tree, testdata aside,
// and calls fn with its directory and syntax tree.
func sourceFiles(t *testing.T, fn func(fset *token.FileSet, dir string, f *ast.File)) {
	t.Helper()
	fset := token.NewFileSet()
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".") && path != ".") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := goparser.ParseFile(fset, path, nil, goparser.SkipObjectResolution)
		if err != nil {
			return err
		}
		fn(fset, filepath.Dir(path), f)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestHouseFunctionLength: no function of the service is over
// maxFuncLines lines between its braces (docs/development.md, "Layout").
func TestHouseFunctionLength(t *testing.T) {
	longest, where := 0, ""
	sourceFiles(t, func(fset *token.FileSet, dir string, f *ast.File) {
		for _, d := range f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || fd.Body == nil {
				continue
			}
			n := fset.Position(fd.Body.Rbrace).Line - fset.Position(fd.Body.Lbrace).Line - 1
			pos := fset.Position(fd.Pos())
			if n > maxFuncLines {
				t.Errorf("%s: %s is %d lines, over %d: split it into named steps", pos, fd.Name.Name, n, maxFuncLines)
			}
			if n > longest {
				longest, where = n, pos.String()+" "+fd.Name.Name
			}
		}
	})
	t.Logf("longest function: %s, %d lines", where, longest)
}

// TestHouseOneSealer: integrations/vault is the only package that does
// AEAD itself (crypto/cipher); every other seals through it.
func TestHouseOneSealer(t *testing.T) {
	var importers []string
	sourceFiles(t, func(_ *token.FileSet, dir string, f *ast.File) {
		for _, imp := range f.Imports {
			if p, _ := strconv.Unquote(imp.Path.Value); p == "crypto/cipher" && !slices.Contains(importers, dir) {
				importers = append(importers, dir)
			}
		}
	})
	if want := []string{filepath.Join("integrations", "vault")}; !slices.Equal(importers, want) {
		t.Errorf("packages importing crypto/cipher: %v, want %v alone", importers, want)
	}
}

// TestHouseIntegrationsRoot logs how many identifiers the integrations
// root exports (functions, types, variables, constants and methods), a
// figure of docs/development.md: the root holds the Integration contract,
// the registry and the error vocabulary, nothing more.
func TestHouseIntegrationsRoot(t *testing.T) {
	top, methods := 0, 0
	sourceFiles(t, func(_ *token.FileSet, dir string, f *ast.File) {
		if dir != "integrations" {
			return
		}
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				if d.Name.IsExported() && d.Recv == nil {
					top++
				} else if d.Name.IsExported() {
					methods++
				}
			case *ast.GenDecl:
				for _, s := range d.Specs {
					switch s := s.(type) {
					case *ast.TypeSpec:
						if s.Name.IsExported() {
							top++
						}
					case *ast.ValueSpec:
						for _, n := range s.Names {
							if n.IsExported() {
								top++
							}
						}
					}
				}
			}
		}
	})
	if top == 0 {
		t.Fatal("found no exported identifier in integrations/: the walk missed the package")
	}
	t.Logf("the integrations root exports %d identifiers: %d top-level, %d methods", top+methods, top, methods)
}

// topLevelDirs are the folders the root may hold: a new concern goes in
// a sub-package of one of them, so the tree a reader opens stays the one
// docs/development.md draws. bin, dist and data are make's outputs, not sources.
var topLevelDirs = []string{"auth", "bin", "data", "dist", "docs", "httpx", "integrations", "oauth", "sessions", "storage", "testdata", "web"}

func TestHouseTopLevel(t *testing.T) {
	entries, err := os.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.IsDir() && !strings.HasPrefix(e.Name(), ".") && !slices.Contains(topLevelDirs, e.Name()) {
			t.Errorf("folder %s/ at the top level: put it under one of %v", e.Name(), topLevelDirs)
		}
	}
}
