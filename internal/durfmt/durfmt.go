// Package durfmt writes durations as people type them in flags and
// settings: 10m rather than 10m0s, 2h rather than 2h0m0s.
package durfmt

import (
	"strings"
	"time"
)

// Short is d as time.Duration.String writes it, without its trailing zero
// units.
func Short(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}
