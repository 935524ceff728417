package chaos

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/outboxkit/terraform-provider-outbox/outbox"
)

func TestClaimSizes(t *testing.T) {
	t.Parallel()
	const overhead = 300
	for _, events := range []int{500, 10000} {
		sizes, err := ClaimSizes(ClaimBands, events, overhead, 1)
		if err != nil {
			t.Fatal(err)
		}
		if len(sizes) != events {
			t.Fatalf("%d events: %d sizes", events, len(sizes))
		}
		total, claimed, atMost, around := 0, 0, 0, 0
		for _, s := range sizes {
			total += ClaimDataSize(s)
			switch {
			case s+overhead > outbox.MaxEntryBytes:
				claimed++
			case s+overhead > outbox.MaxEntryBytes-64:
				around++
			}
			if s == outbox.MaxClaimBytes {
				atMost++
			}
		}
		if lo, hi := slices.Min(sizes), slices.Max(sizes); ClaimDataSize(lo) != 2 || hi != outbox.MaxClaimBytes {
			t.Errorf("%d events: sizes from %d to %d, want 2 to %d", events, lo, hi, outbox.MaxClaimBytes)
		}
		if atMost < 2 || claimed < events/5 || around == 0 {
			t.Errorf("%d events: %d of the largest size, %d claim-checked, %d just under the threshold", events, atMost, claimed, around)
		}
		t.Logf("%d events: %d bytes, %d claim-checked", events, total, claimed)
		again, _ := ClaimSizes(ClaimBands, events, overhead, 1)
		if !slices.Equal(sizes, again) {
			t.Errorf("%d events: the sizes differ from one plan to the next", events)
		}
	}
	if _, err := ClaimSizes(ClaimBands, 20, overhead, 1); err == nil || !strings.Contains(err.Error(), "whole band") {
		t.Errorf("20 events: err = %v, want the bands' minimums named", err)
	}
}

func TestClaimData(t *testing.T) {
	t.Parallel()
	for _, size := range []int{1, 2, 7, 8, 9, 1000, 300 << 10} {
		d := ClaimData(size, uint64(size))
		if len(d) != ClaimDataSize(size) || !json.Valid(d) || d[0] != '{' {
			t.Errorf("ClaimData(%d) = %d bytes %.40q, want a JSON object of %d", size, len(d), d, ClaimDataSize(size))
		}
		var v map[string]string
		if err := json.Unmarshal(d, &v); err != nil {
			t.Fatal(err)
		}
		if back, _ := json.Marshal(v); string(back) != string(d) {
			t.Errorf("ClaimData(%d) is not its own compact form", size)
		}
	}
	if string(ClaimData(64, 1)) == string(ClaimData(64, 2)) {
		t.Error("two seeds gave the same data")
	}
}

func TestClaimResultCheck(t *testing.T) {
	t.Parallel()
	good := ClaimResult{Events: 10, Delivered: 10, Verified: 10, Claimed: 3, WantClaimed: 3, Bytes: 100, MaxBytes: 50,
		OrphansWritten: 2, OrphansRemoved: 2, ObjectsKept: 3, S3Faults: 4, Run: 1500 * time.Millisecond}
	if err := good.Check(); err != nil {
		t.Fatalf("good run: %v", err)
	}
	if got := good.Line(); !strings.HasPrefix(got, "claimcheck: events=10 delivered=10 verified=10 lost=0 claimed=3 bytes=100") || !strings.Contains(got, "orphans_left=0") {
		t.Errorf("line = %q", got)
	}
	checkBreaches(t, good, ClaimResult.Check, map[string]breach[ClaimResult]{
		"lost":            {func(r *ClaimResult) { r.Delivered = 9 }, "9 of 10 events were delivered"},
		"unverified":      {func(r *ClaimResult) { r.Verified = 9 }, "9 of 10 events were verified"},
		"not claimed":     {func(r *ClaimResult) { r.Claimed = 2 }, "2 events arrived claim-checked"},
		"one path":        {func(r *ClaimResult) { r.WantClaimed, r.Claimed, r.ObjectsKept = 0, 0, 0 }, "needs both paths"},
		"integrity":       {func(r *ClaimResult) { r.IntegrityFailures = 1 }, "does not match its reference"},
		"mismatch":        {func(r *ClaimResult) { r.Mismatches = 1 }, "other than what was written"},
		"no orphans":      {func(r *ClaimResult) { r.OrphansWritten, r.OrphansRemoved = 0, 0 }, "no object of an uncommitted"},
		"orphan kept":     {func(r *ClaimResult) { r.OrphansRemoved = 1 }, "removed 1 objects, want the 2"},
		"orphan left":     {func(r *ClaimResult) { r.OrphansLeft = 1 }, "1 objects have no item"},
		"object removed":  {func(r *ClaimResult) { r.ObjectsKept = 2 }, "2 objects after the sweep"},
		"untagged":        {func(r *ClaimResult) { r.Untagged = 1 }, "not tagged published"},
		"left after TTL":  {func(r *ClaimResult) { r.LeftAfterTTL = 1 }, "left after the published items' TTL"},
		"no S3 fault":     {func(r *ClaimResult) { r.S3Faults = 0 }, "no S3 fault"},
		"nothing written": {func(r *ClaimResult) { *r = ClaimResult{OrphansWritten: 1, OrphansRemoved: 1, S3Faults: 1} }, "no event was written"},
	})
}
