package provision

import (
	"cmp"
	"encoding/json"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/lambda/types"

	"github.com/outboxkit/terraform-provider-outbox/internal/relay/config"
	"github.com/outboxkit/terraform-provider-outbox/internal/relay/takeover"
	"github.com/outboxkit/terraform-provider-outbox/internal/validation"
	"github.com/outboxkit/terraform-provider-outbox/outbox"
)

// MultiRegionSpec makes the pipeline one of a multi-Region outbox on a
// global table: each Region's pipeline publishes the events written in its
// Region (outbox.AttrOrigin), and the primary those without origin.
type MultiRegionSpec struct {
	// Regions are the peers, the same list in the same order in every
	// Region; the first is the primary. Empty for a single-Region
	// pipeline, which publishes every event.
	Regions []string
	// TakeoverAfter is how old a peer Region's heartbeat gets before the
	// peer is silent and taken over; 0 is the relay's default
	// (config.DefaultTakeoverAfter). TakeoverSettle is how long a
	// successor's claim settles; 0 is the relay's default
	// (takeover.DefaultSettle).
	TakeoverAfter  time.Duration
	TakeoverSettle time.Duration
}

// maxTakeoverSeconds bounds the takeover delay and settle time: a silent
// Region's events wait that long, and a stream keeps records 24 hours.
const maxTakeoverSeconds = 86400

func (m MultiRegionSpec) withDefaults() MultiRegionSpec {
	m.TakeoverAfter = cmp.Or(m.TakeoverAfter, config.DefaultTakeoverAfter)
	m.TakeoverSettle = cmp.Or(m.TakeoverSettle, takeover.DefaultSettle)
	return m
}

// validateMultiRegion checks the peers: at least two Region names, none
// twice.
func (s Spec) validateMultiRegion() error {
	if s.MultiRegion.Regions == nil {
		return nil
	}
	if problem, fix := validation.PeerRegions(s.MultiRegion.Regions); problem != "" {
		return invalid("MultiRegion.Regions", fix, "%s", problem)
	}
	m := s.MultiRegion
	if after := cmp.Or(m.TakeoverAfter, config.DefaultTakeoverAfter); m.TakeoverSettle >= after {
		return invalidAgainst("MultiRegion.TakeoverSettle", []string{"MultiRegion.TakeoverAfter"}, "lower it, or raise the takeover delay",
			"(%s) is not below the takeover delay (%s)", m.TakeoverSettle, after)
	}
	return nil
}

// CheckRegion reports a multi-Region pipeline created in region, the
// Region of the provider's clients, that is not one of its peers: its
// relay would publish nothing. An unknown region ("") passes.
func (s Spec) CheckRegion(region string) error {
	if problem, fix := validation.OwnRegion(s.MultiRegion.Regions, region); problem != "" {
		return invalid("MultiRegion.Regions", fix, "%s", problem)
	}
	if problem, fix := validation.PeersReplicated(s.MultiRegion.Regions, s.Table.ReplicaRegions, region); problem != "" {
		return invalidAgainst("MultiRegion.Regions", []string{"Table.ReplicaRegions"}, fix, "%s", problem)
	}
	return s.validateReplicas(region)
}

// validateReplicas checks the Regions of the table's replicas: none on an
// adopted table, each a Region name once, and not region, the table's own
// ("" when not known).
func (s Spec) validateReplicas(region string) error {
	replicas := s.Table.ReplicaRegions
	if len(replicas) > 0 && s.Table.Existing {
		return invalidAgainst("Table.ReplicaRegions", []string{"Table.Existing"},
			"manage an adopted table's replicas where the table is managed (such as aws_dynamodb_table's replica blocks), or let the pipeline create its table",
			"is set on an adopted table")
	}
	if problem, fix := validation.ReplicaRegions(replicas, region); problem != "" {
		return invalid("Table.ReplicaRegions", fix, "%s", problem)
	}
	return nil
}

// environment is the relay's variable of the peers, when there are.
func (m MultiRegionSpec) environment() map[string]string {
	if len(m.Regions) == 0 {
		return nil
	}
	env := map[string]string{config.EnvRegions: strings.Join(m.Regions, ",")}
	if m.TakeoverAfter > 0 {
		env[config.EnvTakeoverAfter] = m.TakeoverAfter.String()
	}
	if m.TakeoverSettle > 0 {
		env[config.EnvTakeoverSettle] = m.TakeoverSettle.String()
	}
	return env
}

// streamFilters are the patterns of the relay's mapping: the outbox
// inserts of the table st records; in a multi-Region pipeline, only those
// written in st's Region, and in the primary those without origin too
// (Lambda's "exists" operator, "Using event filtering with a DynamoDB
// event source", Lambda developer guide). A replicated insert is dropped
// by the mapping and never invokes the relay.
func (s Spec) streamFilters(st State) []string {
	base := s.outboxTable(st).StreamFilterPattern()
	peers := s.MultiRegion.Regions
	if len(peers) == 0 {
		return []string{base}
	}
	out := []string{originPattern(base, st.Region)}
	if peers[0] == st.Region {
		out = append(out, originPattern(base, map[string]bool{"exists": false}))
	}
	return out
}

// originPattern is the pattern base with the origin of the new image
// matching match: a Region, or an operator such as {"exists": false}.
func originPattern(base string, match any) string {
	var p map[string]any
	if err := json.Unmarshal([]byte(base), &p); err != nil {
		panic("provision: reading the stream filter pattern: " + err.Error())
	}
	d, _ := p["dynamodb"].(map[string]any)
	if d == nil {
		d = map[string]any{}
		p["dynamodb"] = d
	}
	d["NewImage"] = map[string]any{outbox.AttrOrigin: map[string]any{"S": []any{match}}}
	b, err := json.Marshal(p)
	if err != nil {
		panic("provision: writing the stream filter pattern: " + err.Error())
	}
	return string(b)
}

// filterCriteria is the mapping's filter criteria of the patterns.
func filterCriteria(patterns []string) *types.FilterCriteria {
	f := &types.FilterCriteria{}
	for _, p := range patterns {
		f.Filters = append(f.Filters, types.Filter{Pattern: aws.String(p)})
	}
	return f
}
