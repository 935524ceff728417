package s3

import (
	"net/http/httptest"
	"testing"
)

// TestPathStyle: a Host that names a bucket turns the request into its
// path-style form; other hosts leave it as it is.
func TestPathStyle(t *testing.T) {
	t.Parallel()
	cases := []struct{ host, target, path string }{
		{"127.0.0.1:4566", "/b/k", "/b/k"},
		{"localhost:4566", "/b/k", "/b/k"},
		{"s3.localhost:4566", "/b/k", "/b/k"},
		{"s3.us-east-1.amazonaws.com", "/b/k", "/b/k"},
		{"b.localhost:4566", "/k/x", "/b/k/x"},
		{"my.dotted.bucket.localhost", "/k", "/my.dotted.bucket/k"},
		{"b.s3.us-east-1.amazonaws.com", "/k", "/b/k"},
		{"b.s3.amazonaws.com", "/", "/b"},
		{"b.s3-eu-west-1.amazonaws.com", "/k%2Fx", "/b/k/x"},
		{"B.LOCALHOST:4566", "/", "/b"},
	}
	for _, c := range cases {
		r := httptest.NewRequest("GET", c.target, nil)
		r.Host = c.host
		if got := pathStyle(r).URL.Path; got != c.path {
			t.Errorf("%s%s: path %q, want %q", c.host, c.target, got, c.path)
		}
	}
}

func TestByteRange(t *testing.T) {
	t.Parallel()
	cases := []struct {
		header     string
		start, end int64
		ranged     bool
		err        bool
	}{
		{"", 0, 9, false, false},
		{"bytes=0-0", 0, 0, true, false},
		{"bytes=2-", 2, 9, true, false},
		{"bytes=-3", 7, 9, true, false},
		{"bytes=-30", 0, 9, true, false},
		{"bytes=5-100", 5, 9, true, false},
		{"bytes=10-", 0, 0, false, true},
		{"bytes=5-2", 0, 9, false, false},
		{"bytes=0-1,3-4", 0, 9, false, false},
		{"items=0-1", 0, 9, false, false},
	}
	for _, c := range cases {
		start, end, ranged, err := byteRange(c.header, 10)
		if start != c.start || end != c.end || ranged != c.ranged || (err != nil) != c.err {
			t.Errorf("Range %q of 10 bytes = %d-%d ranged %v err %v", c.header, start, end, ranged, err)
		}
	}
}
