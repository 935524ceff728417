package validation

import (
	"fmt"
	"regexp"
	"slices"
)

// regionName is the shape of an AWS Region name: a partition's area and
// place, then a number ("eu-west-1", "us-gov-east-1", "ap-southeast-5").
var regionName = regexp.MustCompile(`^[a-z]{2}(-[a-z]+)+-[0-9]{1,2}$`)

// MinPeerRegions is the fewest Regions of a multi-Region pipeline: a
// global table has two replicas or more.
const MinPeerRegions = 2

// PeerRegions checks the Regions of a multi-Region pipeline: at least
// MinPeerRegions, each a Region name, none twice. It returns what is wrong
// and the fix, or "".
func PeerRegions(regions []string) (problem, fix string) {
	const order = "list every Region of the global table's replicas once, in the same order in every Region (the first is the primary)"
	if len(regions) < MinPeerRegions {
		return fmt.Sprintf("has %d Region(s), but a multi-Region pipeline needs at least %d", len(regions), MinPeerRegions), order + ", or leave it unset for a single-Region pipeline"
	}
	return regionNames(regions, order)
}

// regionNames checks that each of regions is a Region name, none twice;
// order is the fix of a Region listed twice.
func regionNames(regions []string, order string) (problem, fix string) {
	for i, r := range regions {
		if !regionName.MatchString(r) {
			return fmt.Sprintf("has %q, which is not an AWS Region name", r), `use Region names such as "us-east-1" and "eu-west-1"`
		}
		if slices.Index(regions, r) != i {
			return fmt.Sprintf("has %q twice", r), order
		}
	}
	return "", ""
}

// ReplicaRegions checks the Regions of a table's replicas besides its
// own: each a Region name, none twice, and not own, the table's Region
// ("" when not known yet).
func ReplicaRegions(replicas []string, own string) (problem, fix string) {
	if problem, fix := regionNames(replicas, "list each Region of a replica once"); problem != "" {
		return problem, fix
	}
	if own != "" && slices.Contains(replicas, own) {
		return fmt.Sprintf("has %q, the Region the table is created in", own), fmt.Sprintf("list only the other Regions: the table in %q is the replicas' source", own)
	}
	return "", ""
}

// PeersReplicated checks that each peer Region of a multi-Region
// pipeline has a replica of its table: own, the table's Region, or one of
// replicas. Without replicas (an adopted or single-Region table) there is
// nothing to check.
func PeersReplicated(peers, replicas []string, own string) (problem, fix string) {
	if len(replicas) == 0 || own == "" {
		return "", ""
	}
	for _, p := range peers {
		if p != own && !slices.Contains(replicas, p) {
			return fmt.Sprintf("has %q, where the table has no replica", p), fmt.Sprintf("add a replica of the table in %q, or remove %q from the peers", p, p)
		}
	}
	return "", ""
}

// OwnRegion checks that the Region a pipeline runs in is one of its peer
// Regions. Without peers (a single-Region pipeline) or an own Region (not
// known yet) there is nothing to check.
func OwnRegion(regions []string, own string) (problem, fix string) {
	if len(regions) == 0 || own == "" || slices.Contains(regions, own) {
		return "", ""
	}
	return fmt.Sprintf("does not have %q, the Region this pipeline is created in", own),
		fmt.Sprintf("add %q to the list (the same list in every Region), or create this pipeline with a provider of one of the listed Regions", own)
}
