package awsapi

import (
	"testing"
	"time"
)

func TestEpoch(t *testing.T) {
	at := time.Date(2024, 5, 6, 7, 8, 9, 123456789, time.UTC)
	if got, want := Epoch(at), 1714979289.123; got != want {
		t.Errorf("Epoch = %v, want %v", got, want)
	}
	if got, want := EpochNumber(at).String(), "1714979289.123"; got != want {
		t.Errorf("EpochNumber = %s, want %s", got, want)
	}
}
