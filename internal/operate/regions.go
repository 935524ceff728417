package operate

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/outboxkit/terraform-provider-outbox/internal/durfmt"
	"github.com/outboxkit/terraform-provider-outbox/internal/relay/takeover"
	"github.com/outboxkit/terraform-provider-outbox/outbox"
)

// The states of a Region (RegionStatus.State), as the takeover decides
// them (package takeover) by the pipeline's takeover delay.
const (
	// RegionFresh: its heartbeat is at most the takeover delay old.
	RegionFresh = "fresh"
	// RegionSilent: its heartbeat is older; its successor takes it over.
	RegionSilent = "silent"
	// RegionNotStarted: it never wrote a heartbeat; it is neither silent
	// nor a successor.
	RegionNotStarted = "not-started"
)

// RegionsStatus is each Region of a multi-Region pipeline.
type RegionsStatus struct {
	// Region is the Region the command ran against: the status's pending,
	// failed and backlog count its events (the primary's, those without
	// origin too).
	Region string `json:"region"`
	// TakeoverAfterSeconds is how old a heartbeat gets before its Region
	// is silent (the relay's OUTBOX_TAKEOVER_AFTER).
	TakeoverAfterSeconds float64 `json:"takeoverAfterSeconds"`
	// Peers are the Regions in the peers' order, the primary first.
	Peers []RegionStatus `json:"peers"`
	// after is the takeover delay.
	after time.Duration
}

// RegionStatus is one Region of a multi-Region pipeline.
type RegionStatus struct {
	Region  string `json:"region"`
	Primary bool   `json:"primary"`
	// State is fresh, silent or not-started.
	State string `json:"state"`
	// HeartbeatAt is when its reconciler's last run began, and
	// HeartbeatAgeSeconds how long ago; FreshSince is since when its
	// heartbeats have been fresh. All null when it has none.
	HeartbeatAt         *time.Time `json:"heartbeatAt"`
	HeartbeatAgeSeconds *float64   `json:"heartbeatAgeSeconds"`
	FreshSince          *time.Time `json:"freshSince"`
	// Pending counts the events written in it (the primary's: those
	// without origin too) that are pending, the oldest
	// OldestPendingAgeSeconds old; Failed those that are FAILED.
	Pending                 int     `json:"pending"`
	OldestPendingAgeSeconds float64 `json:"oldestPendingAgeSeconds"`
	Failed                  int     `json:"failed"`
	// Claim is the takeover claim on it; absent when none.
	Claim *ClaimStatus `json:"claim,omitempty"`
	// Holds are the Regions it has taken over: those whose claims it
	// holds, standing.
	Holds []string `json:"holds"`
	// heartbeat is the item read; oldest the age of the oldest pending
	// event.
	heartbeat outbox.Heartbeat
	oldest    time.Duration
}

// ClaimStatus is a takeover claim on a Region.
type ClaimStatus struct {
	// Successor publishes the Region's events since Since.
	Successor string    `json:"successor"`
	Since     time.Time `json:"since"`
	// Standing is true while the successor's heartbeat is fresh; a void
	// claim is replaced by the next fresh successor.
	Standing bool `json:"standing"`
}

// newRegionsStatus is the Regions of p, with nothing read yet; nil for a
// single-Region pipeline.
func newRegionsStatus(p *Pipeline, scope originScope) *RegionsStatus {
	if !scope.multi() {
		return nil
	}
	after := p.Config.TakeoverAfter
	r := &RegionsStatus{Region: p.Region, TakeoverAfterSeconds: after.Seconds(), after: after}
	for i, peer := range scope.peers {
		r.Peers = append(r.Peers, RegionStatus{Region: peer, Primary: i == 0, Holds: []string{}})
	}
	return r
}

// peer is the status of region; nil when it is not a peer.
func (r *RegionsStatus) peer(region string) *RegionStatus {
	for i := range r.Peers {
		if r.Peers[i].Region == region {
			return &r.Peers[i]
		}
	}
	return nil
}

// addPending counts a pending event of region pending for age.
func (r *RegionsStatus) addPending(region string, age time.Duration) {
	if peer := r.peer(region); peer != nil {
		peer.Pending++
		peer.oldest = max(peer.oldest, age)
		peer.OldestPendingAgeSeconds = peer.oldest.Seconds()
	}
}

// addFailed counts the FAILED events of the Regions: those of the Region
// the command ran against, and those left out.
func (r *RegionsStatus) addFailed(own int, leftOut map[string]int) {
	if peer := r.peer(r.Region); peer != nil {
		peer.Failed = own
	}
	for region, n := range leftOut {
		if peer := r.peer(region); peer != nil {
			peer.Failed = n
		}
	}
}

// regionsStatus reads each Region's heartbeat and the claim on it in the
// local replica, and decides at now which are fresh, silent and taken
// over, as the takeover does.
func (c *Clients) regionsStatus(ctx context.Context, p *Pipeline, now time.Time, r *RegionsStatus) error {
	t := p.Table()
	heartbeats := map[string]outbox.Heartbeat{}
	claims := map[string]outbox.Claim{}
	for _, peer := range r.Peers {
		h, err := getItem(ctx, c, t, t.GetHeartbeat(peer.Region), outbox.ParseHeartbeat)
		if err != nil {
			return fmt.Errorf("the heartbeat of %s: %w", peer.Region, err)
		}
		cl, err := getItem(ctx, c, t, t.GetClaim(peer.Region), outbox.ParseClaim)
		if err != nil {
			return fmt.Errorf("the takeover claim on %s: %w", peer.Region, err)
		}
		if !h.At.IsZero() {
			heartbeats[peer.Region] = h
		}
		if cl.ID != "" {
			claims[peer.Region] = cl
		}
	}
	for i := range r.Peers {
		peer := &r.Peers[i]
		peer.heartbeat = heartbeats[peer.Region]
		peer.State = regionState(peer.heartbeat, now, r.after)
		if h := peer.heartbeat; !h.At.IsZero() {
			at, age := h.At.UTC(), now.Sub(h.At).Seconds()
			peer.HeartbeatAt, peer.HeartbeatAgeSeconds = &at, &age
			if !h.Since.IsZero() {
				since := h.Since.UTC()
				peer.FreshSince = &since
			}
		}
		if cl, ok := claims[peer.Region]; ok {
			standing := takeover.Fresh(heartbeats[cl.Successor], now, r.after)
			peer.Claim = &ClaimStatus{Successor: cl.Successor, Since: cl.Since.UTC(), Standing: standing}
			if holder := r.peer(cl.Successor); holder != nil && standing {
				holder.Holds = append(holder.Holds, peer.Region)
			}
		}
	}
	return nil
}

// regionState is the state of a Region whose heartbeat is h.
func regionState(h outbox.Heartbeat, now time.Time, after time.Duration) string {
	switch {
	case h.At.IsZero():
		return RegionNotStarted
	case takeover.Fresh(h, now, after):
		return RegionFresh
	}
	return RegionSilent
}

// getItem reads an item of t with in and decodes it with parse.
func getItem[T any](ctx context.Context, c *Clients, t outbox.Table, in *dynamodb.GetItemInput, parse func(map[string]types.AttributeValue) (T, error)) (T, error) {
	out, err := c.DynamoDB.GetItem(ctx, in)
	if err != nil {
		var zero T
		return zero, call("dynamodb:GetItem", "table "+t.Name, err)
	}
	return parse(out.Item)
}

// regionProblems are the problems of the Regions: a silent one, and the
// old pending events of another one (the Region the command ran against
// has its own line).
func regionProblems(name string, r *RegionsStatus, now time.Time, stuckAfter time.Duration) []string {
	if r == nil {
		return nil
	}
	heartbeats := map[string]outbox.Heartbeat{}
	for _, peer := range r.Peers {
		if !peer.heartbeat.At.IsZero() {
			heartbeats[peer.Region] = peer.heartbeat
		}
	}
	peers := make([]string, len(r.Peers))
	for i, peer := range r.Peers {
		peers[i] = peer.Region
	}
	var out []string
	for _, peer := range r.Peers {
		switch {
		case peer.State == RegionSilent:
			out = append(out, silentProblem(name, peer, r.after, takeover.Successor(peers, peer.Region, heartbeats, now, r.after)))
		case peer.Region != r.Region && peer.Pending > 0 && peer.oldest >= stuckAfter:
			out = append(out, fmt.Sprintf("Region %s has %s pending, the oldest %s old (stuck after %s): see `outbox status %s --region %s`",
				peer.Region, plural(peer.Pending, "event", "events"), round(peer.oldest), stuckAfter, name, peer.Region))
		}
	}
	return out
}

// silentProblem says that peer is silent, who publishes its events, and
// what to check.
func silentProblem(name string, peer RegionStatus, after time.Duration, successor string) string {
	var who string
	switch c := peer.Claim; {
	case c != nil && c.Standing:
		who = fmt.Sprintf("taken over by %s since %s, whose reconciler publishes them", c.Successor, c.Since.Format(time.RFC3339))
	case successor != "":
		who = fmt.Sprintf("not taken over yet: %s, the next fresh peer, claims it on its reconciler's next run", successor)
	default:
		who = "and no peer is fresh to take it over: they wait until a Region's reconciler runs again"
	}
	return fmt.Sprintf("Region %s is silent: its heartbeat is %s old (silent after %s), %s pending, %s; check its relay and reconciler, and replication from it (the table's ReplicationLatency): `outbox status %s --region %s`",
		peer.Region, round(time.Duration(*peer.HeartbeatAgeSeconds*float64(time.Second))), durfmt.Short(after), plural(peer.Pending, "event", "events"), who, name, peer.Region)
}

// printRegions prints each Region of a multi-Region pipeline.
func printRegions(line func(label, format string, args ...any), r *RegionsStatus, now time.Time) {
	line("regions", "takeover after %s; pending, failed and the backlog below count the events written in %s", durfmt.Short(r.after), r.Region)
	for _, peer := range r.Peers {
		var roles []string
		if peer.Primary {
			roles = append(roles, "primary")
		}
		if peer.Region == r.Region {
			roles = append(roles, "this Region")
		}
		state := peer.State
		if state == RegionSilent {
			state = strings.ToUpper(state)
		}
		text := state
		if len(roles) > 0 {
			text = strings.Join(roles, ", ") + ": " + state
		}
		if peer.HeartbeatAt != nil {
			text += fmt.Sprintf(", heartbeat %s (%s ago)", peer.HeartbeatAt.Format(time.RFC3339), round(now.Sub(*peer.HeartbeatAt)))
		}
		text += fmt.Sprintf("; %d pending", peer.Pending)
		if peer.Pending > 0 {
			text += fmt.Sprintf(", oldest %s", round(peer.oldest))
		}
		text += fmt.Sprintf("; %d failed", peer.Failed)
		if c := peer.Claim; c != nil {
			void := ""
			if !c.Standing {
				void = " (void: that Region is not fresh)"
			}
			text += fmt.Sprintf("; taken over by %s since %s%s", c.Successor, c.Since.Format(time.RFC3339), void)
		}
		if len(peer.Holds) > 0 {
			text += "; holds " + strings.Join(peer.Holds, ", ")
		}
		line("  "+peer.Region, "%s", text)
	}
}
