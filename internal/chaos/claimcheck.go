package chaos

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	"github.com/outboxkit/terraform-provider-outbox/outbox"
)

// The claim-check run (TestChaosClaimCheck) writes events whose data spans
// the smallest JSON object to the claim check's largest, MaxClaimBytes, in
// the bands below: most are published whole, a fifth are claim-checked,
// some sit on the threshold (their published form a few bytes either side
// of outbox.MaxEntryBytes), and a few are of the largest sizes. The bands'
// shares keep the bytes a run holds in the local stack's memory to about
// 157 KB per event (1.57 GB for 10,000 events, 92 MB for the 500 of make
// test), since every object stays in the bucket until its TTL.

// ClaimBand is a band of data sizes: Share of the run's events (at least
// Min), their sizes log-uniform from From to To bytes or, AroundThreshold,
// such that the published form is From to To bytes (uniform) from
// outbox.MaxEntryBytes.
type ClaimBand struct {
	Name            string
	From, To        int
	Share           float64
	Min             int
	AroundThreshold bool
}

// ClaimBands are the bands of the claim-check run; the first takes the
// events the others leave.
var ClaimBands = []ClaimBand{
	{Name: "whole", From: 2, To: 240 << 10, Share: 0.77},
	{Name: "threshold", From: -32, To: 32, Share: 0.02, Min: 6, AroundThreshold: true},
	{Name: "claimed", From: 256 << 10, To: 640 << 10, Share: 0.20, Min: 20},
	{Name: "large", From: 640 << 10, To: outbox.MaxClaimBytes, Share: 0.008, Min: 3},
	{Name: "largest", From: outbox.MaxClaimBytes, To: outbox.MaxClaimBytes, Share: 0.002, Min: 2},
}

// minClaimData is the smallest data: {}.
const minClaimData = 2

// claimPad is {"p":""}, the data of ClaimData around its padding.
const claimPad = len(`{"p":""}`)

// ClaimSizes returns the data sizes of a run of events, one per event in
// writing order: each band's count stratified over its range (so that its
// ends are met and a run's total is the same every time), shuffled with
// seed. overhead is what an event's published form adds to its data, for
// the threshold band. The events must outnumber the bands' minimums.
func ClaimSizes(bands []ClaimBand, events, overhead int, seed uint64) ([]int, error) {
	counts := make([]int, len(bands))
	rest := events
	for i := 1; i < len(bands); i++ {
		counts[i] = max(bands[i].Min, int(math.Round(bands[i].Share*float64(events))))
		rest -= counts[i]
	}
	if rest < bands[0].Min || rest < 1 {
		return nil, fmt.Errorf("%d events leave %d for the %s band: the other bands take at least %d", events, rest, bands[0].Name, events-rest)
	}
	counts[0] = rest
	sizes := make([]int, 0, events)
	for i, b := range bands {
		for j := range counts[i] {
			sizes = append(sizes, b.size(j, counts[i], overhead))
		}
	}
	rand.New(rand.NewPCG(seed, 0)).Shuffle(len(sizes), func(i, j int) { sizes[i], sizes[j] = sizes[j], sizes[i] })
	return sizes, nil
}

// size is the j-th of n sizes spread evenly over the band, its ends
// included (one size is the middle): in log space, or around the
// threshold in bytes.
func (b ClaimBand) size(j, n, overhead int) int {
	q := 0.5
	if n > 1 {
		q = float64(j) / float64(n-1)
	}
	if b.AroundThreshold {
		return outbox.MaxEntryBytes - overhead + b.From + int(math.Round(q*float64(b.To-b.From)))
	}
	return int(math.Round(float64(b.From) * math.Pow(float64(b.To)/float64(b.From), q)))
}

// ClaimDataSize is the size ClaimData gives for size: data under the
// smallest padded object ({"p":""}) is {}.
func ClaimDataSize(size int) int {
	if size < claimPad {
		return minClaimData
	}
	return size
}

// claimAlphabet is what the padding is made of: no character JSON escapes,
// so that the data is its own canonical form (consumer.Canonical) and its
// SHA-256 is the kit's PayloadHash.
const claimAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"

// ClaimData returns a JSON object of ClaimDataSize(size) bytes, {} or
// {"p":"<padding>"}, its padding drawn from seed, so that two events'
// data differ.
func ClaimData(size int, seed uint64) []byte {
	if size < claimPad {
		return []byte("{}")
	}
	b := make([]byte, size)
	copy(b, `{"p":"`)
	pad := b[len(`{"p":"`) : size-2]
	src := rand.NewChaCha8([32]byte{0: byte(seed), 1: byte(seed >> 8), 2: byte(seed >> 16), 3: byte(seed >> 24), 4: byte(seed >> 32), 5: byte(seed >> 40), 6: byte(seed >> 48), 7: byte(seed >> 56)})
	_, _ = src.Read(pad) // ChaCha8.Read never fails
	for i, c := range pad {
		pad[i] = claimAlphabet[c&63]
	}
	copy(b[size-2:], `"}`)
	return b
}

// ClaimResult is the outcome of a claim-check run.
type ClaimResult struct {
	// Events counts the committed events; Delivered those the consumer
	// received; Verified those whose data the consumer kit fetched (if
	// claim-checked) and whose hash matched what was written; Claimed the
	// claim-checked ones among them, and WantClaimed those whose published
	// form was over the threshold.
	Events, Delivered, Verified, Claimed, WantClaimed int
	// Bytes is the data written, MinBytes and MaxBytes its extremes.
	Bytes, MinBytes, MaxBytes int64
	// IntegrityFailures counts deliveries the kit refused with
	// ErrDataIntegrity, and Mismatches events whose data was not what was
	// written.
	IntegrityFailures, Mismatches int
	// OrphansWritten counts objects stored for transactions that never
	// committed; OrphansRemoved those the sweep removed; OrphansLeft the
	// objects without an item and not of a published event after it.
	OrphansWritten, OrphansRemoved, OrphansLeft int
	// ObjectsKept counts the objects after the sweep: those of the
	// committed claim-checked events, each tagged published (Untagged
	// counts those that are not); LeftAfterTTL the objects left once the
	// stack's clock passed the published items' TTL.
	ObjectsKept, Untagged, LeftAfterTTL int
	// S3Faults counts the injected S3 errors that fired.
	S3Faults int
	Run      time.Duration
}

// Line is the run's one-line summary.
func (r ClaimResult) Line() string {
	return fmt.Sprintf("claimcheck: events=%d delivered=%d verified=%d lost=%d claimed=%d bytes=%d min_bytes=%d max_bytes=%d integrity_failures=%d mismatches=%d "+
		"orphans_written=%d orphans_removed=%d orphans_left=%d objects_kept=%d untagged=%d left_after_ttl=%d s3_faults=%d run_s=%.1f",
		r.Events, r.Delivered, r.Verified, r.Events-r.Delivered, r.Claimed, r.Bytes, r.MinBytes, r.MaxBytes, r.IntegrityFailures, r.Mismatches,
		r.OrphansWritten, r.OrphansRemoved, r.OrphansLeft, r.ObjectsKept, r.Untagged, r.LeftAfterTTL, r.S3Faults, r.Run.Seconds())
}

// Check returns every violated guarantee: an event not delivered or not
// verified, a claim check where none was due or none where one was, a
// hash that did not match, no orphan to sweep or one left, an object of a
// committed event missing or untagged, an object left after the TTL, or
// no S3 fault at all.
func (r ClaimResult) Check() error {
	var v violations
	v.add(r.Events == 0, "no event was written")
	v.add(r.Delivered != r.Events, "%d of %d events were delivered", r.Delivered, r.Events)
	v.add(r.Verified != r.Events, "%d of %d events were verified", r.Verified, r.Events)
	v.add(r.WantClaimed == 0 || r.WantClaimed == r.Events, "%d of %d events were over the threshold: the run needs both paths", r.WantClaimed, r.Events)
	v.add(r.Claimed != r.WantClaimed, "%d events arrived claim-checked, want the %d over the threshold", r.Claimed, r.WantClaimed)
	v.add(r.IntegrityFailures != 0, "the consumer kit found %d deliveries whose data does not match its reference", r.IntegrityFailures)
	v.add(r.Mismatches != 0, "%d events arrived with data other than what was written", r.Mismatches)
	v.add(r.OrphansWritten == 0, "no object of an uncommitted transaction was written")
	v.add(r.OrphansRemoved != r.OrphansWritten, "the sweep removed %d objects, want the %d orphans", r.OrphansRemoved, r.OrphansWritten)
	v.add(r.OrphansLeft != 0, "%d objects have no item and are not of a published event", r.OrphansLeft)
	v.add(r.ObjectsKept != r.Claimed, "%d objects after the sweep, want the %d of the claim-checked events", r.ObjectsKept, r.Claimed)
	v.add(r.Untagged != 0, "%d objects of published events are not tagged published", r.Untagged)
	v.add(r.LeftAfterTTL != 0, "%d objects are left after the published items' TTL", r.LeftAfterTTL)
	v.add(r.S3Faults == 0, "no S3 fault fired")
	return errors.Join(v...)
}
