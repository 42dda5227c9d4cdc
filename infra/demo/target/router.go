package main

// Router mode (-router ordered-v1|ordered-v2|radixtree): the Easegress router benchmark's set-up in one
// small process. Three route tables of 10,000 routes each, as in the seed's three test cases:
//
//	static  exact routes   /static/<md5(i)>          request /static/<md5("5000")>
//	prefix  prefix routes  /prefix/<md5(i)>          request /prefix/<md5("5000")>/suffix
//	regexp  routes         /users/{username}/<i>     request /users/aniaan/5000
//
// (i = 1..10000). The request's first path segment picks the table in constant time, as each of the
// seed's cases had its own configuration; what differs between the variants is how a table finds the
// route:
//
//	ordered-v1  the rules in order, the first that matches wins: a string compare for an exact or
//	            prefix rule, a compiled regular expression (^/users/[^/]+/<i>$) for a regexp rule
//	ordered-v2  the same ordered scan with each rule compiled into a matcher function beforehand
//	            (no switch on the rule's kind per rule): the seed's v2 was the same algorithm in the
//	            new router code, "basically the same" performance
//	radixtree   a radix tree (compressed trie) of the route paths with a {param} node for a path
//	            segment: a lookup walks the request path once, whatever the number of routes
//
// A matched route answers 200 with its table and number; no route answers 404.

import (
	"crypto/md5"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strconv"
	"strings"
)

const routesPerTable = 10000

type routeKind int

const (
	exactRoute routeKind = iota
	prefixRoute
	regexpRoute
)

// routeSpec is one route of a table: its number, kind and path (a regexp route's path is its
// template, /users/{username}/<i>).
type routeSpec struct {
	id   int
	kind routeKind
	path string
}

type table interface {
	match(path string) (int, bool)
}

func md5Hex(i int) string {
	sum := md5.Sum([]byte(strconv.Itoa(i)))
	return hex.EncodeToString(sum[:])
}

// routeTables are the three tables' routes in their configured order.
func routeTables() map[string][]routeSpec {
	tables := map[string][]routeSpec{}
	for i := 1; i <= routesPerTable; i++ {
		tables["static"] = append(tables["static"], routeSpec{i, exactRoute, "/static/" + md5Hex(i)})
		tables["prefix"] = append(tables["prefix"], routeSpec{i, prefixRoute, "/prefix/" + md5Hex(i)})
		tables["users"] = append(tables["users"], routeSpec{i, regexpRoute, "/users/{username}/" + strconv.Itoa(i)})
	}
	return tables
}

// templateRegexp turns /users/{username}/5 into ^/users/[^/]+/5$.
func templateRegexp(template string) *regexp.Regexp {
	parts := strings.Split(template, "/")
	for i, p := range parts {
		if strings.HasPrefix(p, "{") && strings.HasSuffix(p, "}") {
			parts[i] = "[^/]+"
		} else {
			parts[i] = regexp.QuoteMeta(p)
		}
	}
	return regexp.MustCompile("^" + strings.Join(parts, "/") + "$")
}

// ---------------------------------------------------------------------------------- ordered-v1

type orderedRule struct {
	id   int
	kind routeKind
	path string
	re   *regexp.Regexp
}

type orderedV1 []orderedRule

func newOrderedV1(specs []routeSpec) table {
	rules := make(orderedV1, 0, len(specs))
	for _, s := range specs {
		r := orderedRule{id: s.id, kind: s.kind, path: s.path}
		if s.kind == regexpRoute {
			r.re = templateRegexp(s.path)
		}
		rules = append(rules, r)
	}
	return rules
}

func (t orderedV1) match(path string) (int, bool) {
	for i := range t {
		r := &t[i]
		switch r.kind {
		case exactRoute:
			if path == r.path {
				return r.id, true
			}
		case prefixRoute:
			if strings.HasPrefix(path, r.path) {
				return r.id, true
			}
		case regexpRoute:
			if r.re.MatchString(path) {
				return r.id, true
			}
		}
	}
	return 0, false
}

// ---------------------------------------------------------------------------------- ordered-v2

type orderedV2 struct {
	ids      []int
	matchers []func(string) bool
}

func newOrderedV2(specs []routeSpec) table {
	t := &orderedV2{}
	for _, s := range specs {
		var m func(string) bool
		switch s.kind {
		case exactRoute:
			p := s.path
			m = func(path string) bool { return path == p }
		case prefixRoute:
			p := s.path
			m = func(path string) bool { return strings.HasPrefix(path, p) }
		case regexpRoute:
			m = templateRegexp(s.path).MatchString
		}
		t.ids = append(t.ids, s.id)
		t.matchers = append(t.matchers, m)
	}
	return t
}

func (t *orderedV2) match(path string) (int, bool) {
	for i, m := range t.matchers {
		if m(path) {
			return t.ids[i], true
		}
	}
	return 0, false
}

// ----------------------------------------------------------------------------------- radixtree

type radixNode struct {
	label    string       // the path bytes this edge consumes (empty for a parameter node)
	children []*radixNode // static children, by distinct first byte of their labels
	param    *radixNode   // a {param} child: consumes one path segment (up to the next '/')
	exact    int          // route id ending exactly here (0: none)
	prefix   int          // prefix route ending here: matches any path that continues (0: none)
}

type radixTree struct{ root *radixNode }

func newRadixTree(specs []routeSpec) table {
	t := &radixTree{root: &radixNode{}}
	for _, s := range specs {
		t.insert(s)
	}
	return t
}

func commonPrefix(a, b string) int {
	n := 0
	for n < len(a) && n < len(b) && a[n] == b[n] {
		n++
	}
	return n
}

func (t *radixTree) insert(s routeSpec) {
	n := t.root
	rest := s.path
	for rest != "" {
		if strings.HasPrefix(rest, "{") {
			end := strings.IndexByte(rest, '}')
			if n.param == nil {
				n.param = &radixNode{}
			}
			n, rest = n.param, rest[end+1:]
			continue
		}
		// The static run up to the next parameter.
		run := rest
		if i := strings.IndexByte(rest, '{'); i >= 0 {
			run = rest[:i]
		}
		var child *radixNode
		for _, c := range n.children {
			if c.label[0] == run[0] {
				child = c
				break
			}
		}
		if child == nil {
			child = &radixNode{label: run}
			n.children = append(n.children, child)
			n, rest = child, rest[len(run):]
			continue
		}
		k := commonPrefix(child.label, run)
		if k < len(child.label) { // split the edge at k
			tail := &radixNode{label: child.label[k:], children: child.children, param: child.param,
				exact: child.exact, prefix: child.prefix}
			child.label, child.children, child.param, child.exact, child.prefix = child.label[:k], []*radixNode{tail}, nil, 0, 0
		}
		n, rest = child, rest[k:]
	}
	if s.kind == prefixRoute {
		n.prefix = s.id
	} else {
		n.exact = s.id
	}
}

func (t *radixTree) match(path string) (int, bool) {
	id := lookup(t.root, path, 0)
	return id, id != 0
}

// lookup walks from n with `rest` of the path left: a static child first, then the parameter child
// (backtracking when a branch fails); `best` is the longest prefix route passed so far.
func lookup(n *radixNode, rest string, best int) int {
	if n.prefix != 0 {
		best = n.prefix
	}
	if rest == "" {
		if n.exact != 0 {
			return n.exact
		}
		return best
	}
	for _, c := range n.children {
		if c.label[0] == rest[0] {
			if strings.HasPrefix(rest, c.label) {
				if id := lookup(c, rest[len(c.label):], best); id != 0 {
					return id
				}
			}
			break
		}
	}
	if n.param != nil {
		end := strings.IndexByte(rest, '/')
		if end < 0 {
			end = len(rest)
		}
		if end > 0 {
			if id := lookup(n.param, rest[end:], best); id != 0 {
				return id
			}
		}
	}
	return best
}

// -------------------------------------------------------------------------------------- server

var routerKinds = map[string]func([]routeSpec) table{
	"ordered-v1": newOrderedV1,
	"ordered-v2": newOrderedV2,
	"radixtree":  newRadixTree,
}

func newRouter(kind string) (http.Handler, error) {
	build, ok := routerKinds[kind]
	if !ok {
		return nil, fmt.Errorf("unknown -router %q (ordered-v1, ordered-v2, radixtree)", kind)
	}
	tables := map[string]table{}
	for name, specs := range routeTables() {
		tables[name] = build(specs)
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/ok" {
			io.WriteString(w, "ok\n")
			return
		}
		first := strings.TrimPrefix(r.URL.Path, "/")
		if i := strings.IndexByte(first, '/'); i >= 0 {
			first = first[:i]
		}
		t, found := tables[first]
		if !found {
			http.NotFound(w, r)
			return
		}
		id, ok := t.match(r.URL.Path)
		if !ok {
			http.NotFound(w, r)
			return
		}
		fmt.Fprintf(w, "%s route %d (%s)\n", first, id, kind)
	}), nil
}
