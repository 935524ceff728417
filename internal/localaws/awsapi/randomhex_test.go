package awsapi

import (
	"encoding/hex"
	"testing"
)

func TestRandomHex(t *testing.T) {
	a, b := RandomHex(8), RandomHex(8)
	if len(a) != 16 || a == b {
		t.Fatalf("RandomHex(8) = %q, %q: want two different 16-digit ids", a, b)
	}
	if _, err := hex.DecodeString(a); err != nil {
		t.Fatalf("RandomHex(8) = %q: %v", a, err)
	}
}
