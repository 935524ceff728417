package awsapi

import (
	"cmp"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
)

// Routes is the operations table of a REST service with its routes
// compiled: it names the operation of a request from its method and path
// (ResolveOperation, the router's OperationResolver) and dispatches it with
// its path labels (Handle). A service embeds a *Routes to implement both.
type Routes struct {
	ops    Operations
	routes []route
}

// route is one compiled Operation.Route.
type route struct {
	op     string
	method string
	// segments are literals, labels ("{Name}") and, last only, a greedy
	// label ("{Name...}").
	segments []string
	// query are the query parameters the request must carry, as the
	// Smithy model's "?tagging" or "?list-type=2" (value "" when only the
	// name is required).
	query map[string]string
}

// NewRoutes compiles the Route of every operation of ops. A malformed
// pattern is a programming error: NewRoutes panics, so a service's tests
// catch it at construction.
func NewRoutes(ops Operations) *Routes {
	r := &Routes{ops: ops}
	for name, op := range ops {
		if op.Route == "" {
			continue
		}
		rt, err := compileRoute(name, op.Route)
		if err != nil {
			panic(err)
		}
		r.routes = append(r.routes, rt)
	}
	// Literal segments win over labels; the order is otherwise fixed.
	slices.SortFunc(r.routes, func(a, b route) int {
		return cmp.Or(cmp.Compare(b.literals(), a.literals()), cmp.Compare(a.op, b.op))
	})
	return r
}

func compileRoute(op, pattern string) (route, error) {
	method, path, ok := strings.Cut(pattern, " ")
	if !ok || method == "" || !strings.HasPrefix(path, "/") {
		return route{}, fmt.Errorf("operation %s: route %q is not \"METHOD /path\"", op, pattern)
	}
	path, rawQuery, _ := strings.Cut(path, "?")
	segs := splitPath(path)
	for i, s := range segs {
		if strings.HasSuffix(s, "...}") && i != len(segs)-1 {
			return route{}, fmt.Errorf("operation %s: route %q has a greedy label before its end", op, pattern)
		}
	}
	rt := route{op: op, method: method, segments: segs}
	for _, q := range strings.Split(rawQuery, "&") {
		if q == "" {
			continue
		}
		if rt.query == nil {
			rt.query = map[string]string{}
		}
		name, value, _ := strings.Cut(q, "=")
		rt.query[name] = value
	}
	return rt, nil
}

// splitPath splits a path into its segments, leading and trailing slashes
// aside ("/2015-03-31/functions/" and "/2015-03-31/functions" are the same).
func splitPath(p string) []string {
	return strings.Split(strings.Trim(p, "/"), "/")
}

func (rt route) literals() int {
	n := len(rt.query)
	for _, s := range rt.segments {
		if !strings.HasPrefix(s, "{") {
			n++
		}
	}
	return n
}

// match returns the labels of the request's path when it matches the
// route, or nil. Labels are unescaped; a greedy label keeps the slashes.
func (rt route) match(r *http.Request) map[string]string {
	if r.Method != rt.method || !rt.queryMatches(r.URL.Query()) {
		return nil
	}
	parts := splitPath(r.URL.EscapedPath())
	last := len(rt.segments) - 1
	greedy := strings.HasSuffix(rt.segments[last], "...}")
	if len(parts) != len(rt.segments) && (!greedy || len(parts) < len(rt.segments)) {
		return nil
	}
	for i, seg := range rt.segments {
		if !strings.HasPrefix(seg, "{") && parts[i] != seg {
			return nil
		}
	}
	labels := map[string]string{}
	for i, seg := range rt.segments {
		name, isLabel := strings.CutPrefix(seg, "{")
		if !isLabel {
			continue
		}
		name, raw := strings.TrimSuffix(name, "}"), parts[i]
		if i == last && greedy {
			name, raw = strings.TrimSuffix(name, "..."), strings.Join(parts[i:], "/")
		}
		v, err := url.PathUnescape(raw)
		if err != nil || v == "" {
			return nil
		}
		labels[name] = v
	}
	return labels
}

// queryMatches reports whether q carries the route's query parameters.
func (rt route) queryMatches(q url.Values) bool {
	for name, want := range rt.query {
		if !q.Has(name) || (want != "" && q.Get(name) != want) {
			return false
		}
	}
	return true
}

// ResolveOperation implements OperationResolver: the operation whose route
// matches the request, or "".
func (r *Routes) ResolveOperation(hr *http.Request) string {
	for _, rt := range r.routes {
		if rt.match(hr) != nil {
			return rt.op
		}
	}
	return ""
}

// Handle dispatches req to its operation (named from its method and path
// when the router has not named it) with the labels of its path; a request
// its operation's route does not match is an unknown operation.
func (r *Routes) Handle(req *Request) (any, error) {
	if req.Operation == "" && req.HTTP != nil {
		req.Operation = r.ResolveOperation(req.HTTP)
	}
	i := slices.IndexFunc(r.routes, func(rt route) bool { return rt.op == req.Operation })
	if i >= 0 {
		if req.HTTP == nil {
			return nil, unknownOperation(req.Wire, req.Operation)
		}
		if req.labels = r.routes[i].match(req.HTTP); req.labels == nil {
			return nil, unknownOperation(req.Wire, req.Operation)
		}
	}
	return r.ops.Handle(req)
}
