package awsapi

import (
	"net/url"
	"testing"
)

func TestIntParam(t *testing.T) {
	for _, c := range []struct {
		query  string
		n      int
		wantOK bool
	}{
		{"", 50, true},
		{"MaxItems=", 50, true},
		{"MaxItems=1", 1, true},
		{"MaxItems=100", 100, true},
		{"MaxItems=0", 0, false},
		{"MaxItems=101", 0, false},
		{"MaxItems=ten", 0, false},
	} {
		q, err := url.ParseQuery(c.query)
		if err != nil {
			t.Fatal(err)
		}
		if n, ok := IntParam(q, "MaxItems", 50, 1, 100); n != c.n || ok != c.wantOK {
			t.Errorf("IntParam(%q) = %d, %v, want %d, %v", c.query, n, ok, c.n, c.wantOK)
		}
	}
}
