package codecov

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"golang.org/x/tools/cover"
)

// source is what the coverage is mapped onto: each profiled file's
// functions, the route tables' rows and the DEFECT markers.
type source struct {
	typeDocs    []typeDoc
	typeMarkers []typeMarker
	funcs       map[string][]function // by profiled file name (import path)
	byName      map[string]*function  // by package and name: "pkg.name", "pkg.Recv.name"
	routes      []route
	markers     map[string][]site // by defect ID
}

type function struct {
	pkg, key   string // the package's import path; its name in the package ("f", "T.m")
	file       string
	start, end int
	refs       []string // the package-level functions and methods it names
}

type route struct {
	pkg, method, pattern, defect string
	handlers                     []string
}

// site is the code a marker stands on: the line after its comment, or,
// for a marker in a declaration's doc comment, the lines of the function or
// of the type's methods (from to to).
type site struct {
	file     string
	line     int
	from, to int // 0 for a line
}

var marker = regexp.MustCompile(`DEFECT\(([A-Z]+-[0-9]+)\)`)

// readSource parses the source of every profiled file under src.
func readSource(src string, profiles []*cover.Profile) (*source, error) {
	s := &source{funcs: map[string][]function{}, byName: map[string]*function{}, markers: map[string][]site{}}
	fset := token.NewFileSet()
	for _, p := range profiles {
		rel, ok := strings.CutPrefix(p.FileName, ModulePrefix)
		if !ok {
			continue
		}
		text, err := os.ReadFile(filepath.Join(src, filepath.FromSlash(rel)))
		if err != nil {
			return nil, err
		}
		f, err := parser.ParseFile(fset, p.FileName, text, parser.ParseComments)
		if err != nil {
			return nil, err
		}
		pkg := path.Dir(p.FileName)
		for _, d := range f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok {
				continue
			}
			fn := function{pkg: pkg, key: funcKey(fd), file: p.FileName,
				start: fset.Position(fd.Pos()).Line, end: fset.Position(fd.End()).Line, refs: namesIn(fd.Body)}
			s.funcs[p.FileName] = append(s.funcs[p.FileName], fn)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			if r, ok := routeOf(n); ok {
				r.pkg = pkg
				s.routes = append(s.routes, r)
			}
			return true
		})
		// A marker in a declaration's doc comment stands on the
		// declaration: a function's body, a type's methods.
		docs := map[*ast.CommentGroup][][2]int{}
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				if d.Doc != nil {
					docs[d.Doc] = append(docs[d.Doc], [2]int{fset.Position(d.Pos()).Line, fset.Position(d.End()).Line})
				}
			case *ast.GenDecl:
				for _, spec := range d.Specs {
					ts, ok := spec.(*ast.TypeSpec)
					if !ok {
						continue
					}
					doc := ts.Doc
					if doc == nil {
						doc = d.Doc
					}
					if doc == nil {
						continue
					}
					docs[doc] = append(docs[doc], [2]int{-1, 0}) // its methods, found below
					s.typeDocs = append(s.typeDocs, typeDoc{doc: doc, pkg: pkg, name: ts.Name.Name})
				}
			}
		}
		for _, cg := range f.Comments {
			for _, c := range cg.List {
				for _, m := range marker.FindAllStringSubmatch(c.Text, -1) {
					ranges, isDoc := docs[cg]
					if !isDoc {
						// The marker stands on the code after its comment.
						s.markers[m[1]] = append(s.markers[m[1]], site{file: p.FileName, line: fset.Position(cg.End()).Line + 1})
						continue
					}
					for _, r := range ranges {
						if r[0] < 0 {
							s.typeMarkers = append(s.typeMarkers, typeMarker{id: m[1], pkg: pkg, typeName: typeNameOf(s.typeDocs, cg)})
							continue
						}
						s.markers[m[1]] = append(s.markers[m[1]], site{file: p.FileName, line: r[0], from: r[0], to: r[1]})
					}
				}
			}
		}
	}
	for file := range s.funcs {
		for i := range s.funcs[file] {
			fn := &s.funcs[file][i]
			s.byName[fn.pkg+"."+fn.key] = fn
		}
	}
	// A marker on a type stands on its methods, wherever they are.
	for _, tm := range s.typeMarkers {
		for _, fn := range s.byName {
			if fn.pkg == tm.pkg && strings.HasPrefix(fn.key, tm.typeName+".") {
				s.markers[tm.id] = append(s.markers[tm.id], site{file: fn.file, line: fn.start, from: fn.start, to: fn.end})
			}
		}
	}
	for id := range s.markers {
		sort.Slice(s.markers[id], func(i, j int) bool {
			a, b := s.markers[id][i], s.markers[id][j]
			return a.file < b.file || a.file == b.file && a.line < b.line
		})
	}
	return s, nil
}

type typeDoc struct {
	doc       *ast.CommentGroup
	pkg, name string
}

type typeMarker struct {
	id, pkg, typeName string
}

func typeNameOf(docs []typeDoc, cg *ast.CommentGroup) string {
	for _, d := range docs {
		if d.doc == cg {
			return d.name
		}
	}
	return ""
}

func funcKey(fd *ast.FuncDecl) string {
	if fd.Recv == nil || len(fd.Recv.List) == 0 {
		return fd.Name.Name
	}
	t := fd.Recv.List[0].Type
	if st, ok := t.(*ast.StarExpr); ok {
		t = st.X
	}
	if ix, ok := t.(*ast.IndexExpr); ok {
		t = ix.X
	}
	if id, ok := t.(*ast.Ident); ok {
		return id.Name + "." + fd.Name.Name
	}
	return fd.Name.Name
}

// routeOf reads a row of a route table: a routes.Route literal with its
// Method, Pattern, Defect and handlers (Planted, Conformant).
func routeOf(n ast.Node) (route, bool) {
	cl, ok := n.(*ast.CompositeLit)
	if !ok {
		return route{}, false
	}
	if sel, ok := cl.Type.(*ast.SelectorExpr); cl.Type != nil && (!ok || sel.Sel.Name != "Route") {
		return route{}, false
	}
	var r route
	for _, e := range cl.Elts {
		kv, ok := e.(*ast.KeyValueExpr)
		if !ok {
			return route{}, false
		}
		key, ok := kv.Key.(*ast.Ident)
		if !ok {
			return route{}, false
		}
		switch key.Name {
		case "Method":
			if sel, ok := kv.Value.(*ast.SelectorExpr); ok {
				r.method = strings.ToUpper(strings.TrimPrefix(sel.Sel.Name, "Method"))
			}
		case "Pattern":
			if lit, ok := kv.Value.(*ast.BasicLit); ok {
				r.pattern, _ = strconv.Unquote(lit.Value)
			}
		case "Defect":
			if lit, ok := kv.Value.(*ast.BasicLit); ok {
				r.defect, _ = strconv.Unquote(lit.Value)
			}
		case "Planted", "Conformant", "Handler":
			// A handler, or a call that makes one (s.budgeted(s.luhn)):
			// every function it names.
			r.handlers = append(r.handlers, namesIn(kv.Value)...)
		}
	}
	return r, r.pattern != "" && r.method != "" && len(r.handlers) > 0
}

// namesIn are the names n uses: each identifier, and each selected name
// as ".name" (a method, or a function of another package).
func namesIn(n ast.Node) []string {
	var out []string
	ast.Inspect(n, func(n ast.Node) bool {
		switch x := n.(type) {
		case *ast.Ident:
			out = append(out, x.Name)
		case *ast.SelectorExpr:
			out = append(out, "."+x.Sel.Name)
		}
		return true
	})
	return out
}

// behind is every function of pkg a route's handlers reach by naming:
// the handlers, and what they name, in the package, transitively.
func (s *source) behind(pkg string, handlers []string) []*function {
	seen := map[*function]bool{}
	var out []*function
	var visit func(name string)
	visit = func(name string) {
		for _, fn := range s.lookup(pkg, name) {
			if seen[fn] {
				continue
			}
			seen[fn] = true
			out = append(out, fn)
			for _, ref := range fn.refs {
				visit(ref)
			}
		}
	}
	for _, h := range handlers {
		visit(h)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].key < out[j].key })
	return out
}

// lookup is the functions of pkg a name can mean: a function, or (".m")
// any method m.
func (s *source) lookup(pkg, name string) []*function {
	if m, ok := strings.CutPrefix(name, "."); ok {
		var out []*function
		for key, fn := range s.byName {
			if strings.HasPrefix(key, pkg+".") && strings.HasSuffix(key, "."+m) && strings.Count(strings.TrimPrefix(key, pkg+"."), ".") == 1 {
				out = append(out, fn)
			}
		}
		sort.Slice(out, func(i, j int) bool { return out[i].key < out[j].key })
		return out
	}
	if fn := s.byName[pkg+"."+name]; fn != nil {
		return []*function{fn}
	}
	return nil
}

// endpoints is the coverage of the functions behind each route.
func (s *source) endpoints(profiles []*cover.Profile) []Item {
	blocks := blocksByFile(profiles)
	out := []Item{}
	for _, r := range s.routes {
		it := Item{Name: r.method + " " + r.pattern}
		for _, fn := range s.behind(r.pkg, r.handlers) {
			it.Functions = append(it.Functions, path.Base(fn.pkg)+"."+fn.key)
			for _, b := range blocks[fn.file] {
				if b.StartLine >= fn.start && b.EndLine <= fn.end {
					add(&it.Count, b)
				}
			}
		}
		out = append(out, it)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// defects is the coverage of each planted defect's code: the blocks that
// hold the line each of its markers stands on.
func (s *source) defects(profiles []*cover.Profile) []Defect {
	blocks := blocksByFile(profiles)
	out := []Defect{}
	for _, id := range sortedKeys(s.markers) {
		d := Defect{ID: id, Sites: []string{}}
		counted := map[cover.ProfileBlock]bool{}
		for _, m := range s.markers[id] {
			found := false
			for _, b := range blocks[m.file] {
				if m.to == 0 && b.StartLine <= m.line && m.line <= b.EndLine || m.to != 0 && b.StartLine >= m.from && b.EndLine <= m.to {
					found = true
					if !counted[b] {
						counted[b] = true
						add(&d.Count, b)
						d.Executed = d.Executed || b.Count > 0
					}
				}
			}
			if found { // a marker on a declaration holds no statement
				d.Sites = append(d.Sites, fmt.Sprintf("%s:%d", strings.TrimPrefix(m.file, ModulePrefix), m.line))
			}
		}
		out = append(out, d)
	}
	return out
}

// blocksByFile are the profiles' blocks by file name.
func blocksByFile(profiles []*cover.Profile) map[string][]cover.ProfileBlock {
	blocks := map[string][]cover.ProfileBlock{}
	for _, p := range profiles {
		blocks[p.FileName] = p.Blocks
	}
	return blocks
}
