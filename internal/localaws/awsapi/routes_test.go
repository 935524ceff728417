package awsapi

import (
	"errors"
	"net/http/httptest"
	"testing"
)

func TestRoutes(t *testing.T) {
	t.Parallel()
	label := func(name string) func(*Request) (any, error) {
		return func(req *Request) (any, error) { return req.PathValue(name), nil }
	}
	routes := NewRoutes(Operations{
		"ListThings": {Route: "GET /2020-01-01/things", Handle: label("")},
		"GetThing":   {Route: "GET /2020-01-01/things/{Name}", Handle: label("Name")},
		"GetLatest":  {Route: "GET /2020-01-01/things/latest", Handle: label("")},
		"ListTags":   {Route: "GET /tags/{ResourceArn...}", Handle: label("ResourceArn")},
	})
	cases := []struct{ method, target, op, label string }{
		{"GET", "/2020-01-01/things", "ListThings", ""},
		{"GET", "/2020-01-01/things/", "ListThings", ""},
		{"GET", "/2020-01-01/things/a%20b", "GetThing", "a b"},
		{"GET", "/2020-01-01/things/latest", "GetLatest", ""},
		{"GET", "/tags/arn:aws:x:us-east-1:1:g%2Fa/b", "ListTags", "arn:aws:x:us-east-1:1:g/a/b"},
		{"POST", "/2020-01-01/things", "", ""},
		{"GET", "/2020-01-01/things/a/b", "", ""},
		{"GET", "/tags/", "", ""},
	}
	for _, c := range cases {
		hr := httptest.NewRequest(c.method, c.target, nil)
		if op := routes.ResolveOperation(hr); op != c.op {
			t.Errorf("%s %s resolves to %q, want %q", c.method, c.target, op, c.op)
			continue
		}
		out, err := routes.Handle(&Request{HTTP: hr, Wire: RESTJSON})
		var e *Error
		switch {
		case c.op == "" && (!errors.As(err, &e) || e.Code != "UnknownOperationException"):
			t.Errorf("%s %s: %v, want UnknownOperationException", c.method, c.target, err)
		case c.op != "" && (err != nil || out != c.label):
			t.Errorf("%s %s: label %v, %v; want %q", c.method, c.target, out, err, c.label)
		}
	}
	// An operation named by the caller must still match its own route.
	hr := httptest.NewRequest("GET", "/2020-01-01/things", nil)
	if _, err := routes.Handle(&Request{HTTP: hr, Operation: "GetThing"}); err == nil {
		t.Error("GetThing served on the path of ListThings")
	}
}

func TestRoutesRejectMalformedPatterns(t *testing.T) {
	t.Parallel()
	for _, pattern := range []string{"/no/method", "GET no-slash", "GET /{Rest...}/tail"} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("route %q compiled", pattern)
				}
			}()
			NewRoutes(Operations{"Op": {Route: pattern}})
		}()
	}
}

// TestRoutesWithQuery: a route's query parameters must be present (with
// their value when given), and the route naming more of them wins.
func TestRoutesWithQuery(t *testing.T) {
	t.Parallel()
	routes := NewRoutes(Operations{
		"PutObject":        {Route: "PUT /{Bucket}/{Key...}"},
		"PutObjectTagging": {Route: "PUT /{Bucket}/{Key...}?tagging"},
		"ListObjectsV2":    {Route: "GET /{Bucket}?list-type=2"},
	})
	cases := []struct{ method, target, op string }{
		{"PUT", "/b/k/x", "PutObject"},
		{"PUT", "/b/k/x?tagging", "PutObjectTagging"},
		{"PUT", "/b/k/x?tagging=", "PutObjectTagging"},
		{"GET", "/b?list-type=2&prefix=a", "ListObjectsV2"},
		{"GET", "/b?list-type=1", ""},
		{"GET", "/b", ""},
	}
	for _, c := range cases {
		if op := routes.ResolveOperation(httptest.NewRequest(c.method, c.target, nil)); op != c.op {
			t.Errorf("%s %s resolves to %q, want %q", c.method, c.target, op, c.op)
		}
	}
}
