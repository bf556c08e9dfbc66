package flinkgo_test

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/flinkgo/flinkgo/"

// allowed lists, per package, the packages of this module it may import
// (docs/architecture.md). Packages not listed may import anything.
var allowed = map[string][]string{
	"internal/msgp": {},
	"snapshot":      {"internal"},
	"arrowio":       {},
	"statestore":    {"snapshot", "internal"},
	"operator":      {"statestore", "snapshot"},
	"bridge":        {"operator", "statestore", "snapshot", "arrowio", "internal"},
}

// forbidden lists standard or third-party packages a package must not
// import: the operator core does no I/O.
var forbidden = map[string][]string{
	"operator": {"net", "os", "os/exec", "net/http", "github.com/twmb/franz-go", "github.com/apache/arrow-go"},
	"snapshot": {"net", "os"},
}

func TestImportBoundaries(t *testing.T) {
	for pkg, ok := range allowed {
		files, err := filepath.Glob(filepath.Join(pkg, "*.go"))
		if err != nil || len(files) == 0 {
			t.Fatalf("package %s: no Go files (%v)", pkg, err)
		}
		for _, f := range files {
			if strings.HasSuffix(f, "_test.go") {
				continue // tests may read golden files and build fixtures
			}
			src, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			af, err := parser.ParseFile(token.NewFileSet(), f, src, parser.ImportsOnly)
			if err != nil {
				t.Fatal(err)
			}
			for _, imp := range af.Imports {
				path, _ := strconv.Unquote(imp.Path.Value)
				if own, isOwn := strings.CutPrefix(path, module); isOwn {
					if !contains(ok, strings.SplitN(own, "/", 2)[0]) {
						t.Errorf("%s imports %s; %s may import only %v of this module", f, path, pkg, ok)
					}
					continue
				}
				for _, bad := range forbidden[pkg] {
					if path == bad || strings.HasPrefix(path, bad+"/") {
						t.Errorf("%s imports %s, which package %s must not use", f, path, pkg)
					}
				}
			}
		}
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
