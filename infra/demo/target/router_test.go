package main

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// The three variants answer every request alike: the seed's three requests, every route of each
// table, and paths no route matches (expected ids worked out from the route definitions, not from a
// variant).
func TestRouterVariantsAgree(t *testing.T) {
	cases := []struct {
		path string
		want string // "" for 404
	}{
		{"/static/a35fe7f7fe8217b4369a0af4244d1fca", "static route 5000"},
		{"/prefix/a35fe7f7fe8217b4369a0af4244d1fca/suffix", "prefix route 5000"},
		{"/users/aniaan/5000", "users route 5000"},
		{"/static/" + md5Hex(1), "static route 1"},
		{"/static/" + md5Hex(10000), "static route 10000"},
		{"/prefix/" + md5Hex(7), "prefix route 7"},
		{"/prefix/" + md5Hex(10000) + "/a/b", "prefix route 10000"},
		{"/users/x/1", "users route 1"},
		{"/users/bob/10000", "users route 10000"},
		{"/static/" + md5Hex(5000) + "/suffix", ""}, // static routes are exact
		{"/static/" + md5Hex(10001), ""},
		{"/prefix/" + md5Hex(10001) + "/suffix", ""},
		{"/users/aniaan/10001", ""},
		{"/users/aniaan/50", "users route 50"},
		{"/users//5000", ""}, // {username} needs at least one byte
		{"/users/a/b/5000", ""},
		{"/nowhere", ""},
	}
	for kind := range routerKinds {
		h, err := newRouter(kind)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range cases {
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, c.path, nil))
			if c.want == "" {
				if rec.Code != http.StatusNotFound {
					t.Errorf("%s %s: %d %q, want 404", kind, c.path, rec.Code, rec.Body.String())
				}
				continue
			}
			if rec.Code != http.StatusOK || !strings.HasPrefix(rec.Body.String(), c.want+" (") {
				t.Errorf("%s %s: %d %q, want %q", kind, c.path, rec.Code, rec.Body.String(), c.want)
			}
		}
	}
}

func TestRadixTreeFindsEveryRoute(t *testing.T) {
	for name, specs := range routeTables() {
		tree := newRadixTree(specs)
		for _, s := range specs {
			path := strings.Replace(s.path, "{username}", "someone", 1)
			if s.kind == prefixRoute {
				path += "/more"
			}
			if id, ok := tree.match(path); !ok || id != s.id {
				t.Fatalf("%s: %s matched %d %v, want %d", name, path, id, ok, s.id)
			}
		}
	}
}

func TestUnknownRouterKind(t *testing.T) {
	if _, err := newRouter("linear"); err == nil || !strings.Contains(err.Error(), "ordered-v1") {
		t.Fatalf("want an error naming the kinds, got %v", err)
	}
}
