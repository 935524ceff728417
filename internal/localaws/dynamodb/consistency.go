package dynamodb

import (
	"slices"

	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/awsapi"
)

// The consistency modes of a global table (UpdateTable's
// MultiRegionConsistency): multi-Region eventual consistency, the default,
// and multi-Region strong consistency (MRSC), chosen when the global table
// is created and never changed ("Global tables - multi-active,
// multi-Region replication", DynamoDB developer guide).
const (
	consistencyEventual = "EVENTUAL"
	consistencyStrong   = "STRONG"
)

// mrscRegions is the number of Regions of an MRSC global table: three
// replicas, or two and a witness.
const mrscRegions = 3

// witnessUpdate is one entry of UpdateTable's GlobalTableWitnessUpdates,
// shaped as a ReplicaUpdates entry.
type witnessUpdate = replicaUpdate

// validateConsistency checks UpdateTable's MultiRegionConsistency and
// GlobalTableWitnessUpdates, as DynamoDB does: the mode is valid only with
// the ReplicaUpdates that create a global table, and MRSC needs an empty
// table without TTL and exactly three Regions, the witness one of them.
func (s *Service) validateConsistency(t *table, in *updateTableInput) error {
	mode := in.MultiRegionConsistency
	creates := created(in.ReplicaUpdates)
	switch {
	case mode != "" && mode != consistencyEventual && mode != consistencyStrong:
		return awsapi.ValidationException("1 validation error detected: Value '%s' at 'multiRegionConsistency' failed to satisfy constraint: Member must satisfy enum value set: [EVENTUAL, STRONG]", mode)
	case mode != "" && (len(creates) == 0 || len(t.replicas) > 0):
		return awsapi.ValidationException("One or more parameter values were invalid: MultiRegionConsistency is valid only when ReplicaUpdates create a global table from a table without replicas; a global table's consistency mode cannot be changed")
	case mode != consistencyStrong && len(in.GlobalTableWitnessUpdates) > 0:
		return awsapi.ValidationException("One or more parameter values were invalid: GlobalTableWitnessUpdates are valid only for a global table with MultiRegionConsistency STRONG")
	case mode != consistencyStrong:
		return nil
	}
	witnesses := created(in.GlobalTableWitnessUpdates)
	regions := append(append([]string{s.env.Region}, creates...), witnesses...)
	slices.Sort(regions)
	switch {
	case slices.ContainsFunc(witnesses, func(r string) bool { return !regionNameRE.MatchString(r) }):
		return awsapi.ValidationException("One or more parameter values were invalid: a witness's RegionName must be a Region (such as eu-west-1)")
	case slices.ContainsFunc(in.GlobalTableWitnessUpdates, func(u witnessUpdate) bool { return u.Delete != nil }) || len(witnesses) > 1:
		return awsapi.ValidationException("One or more parameter values were invalid: a new MRSC global table takes at most one witness, created with GlobalTableWitnessUpdates Create")
	case len(slices.Compact(regions)) != len(regions):
		return awsapi.ValidationException("One or more parameter values were invalid: a witness must be in a Region without a replica of the table %s", t.name)
	case len(regions) != mrscRegions:
		return awsapi.ValidationException("One or more parameter values were invalid: a global table with MultiRegionConsistency STRONG needs exactly %d Regions (three replicas, or two replicas and a witness), not %d", mrscRegions, len(regions))
	case t.ttlEnabled:
		return awsapi.ValidationException("One or more parameter values were invalid: Time to Live is not supported on a global table with MultiRegionConsistency STRONG: disable it on the table %s first", t.name)
	}
	items, err := s.scanAllLocked(t.name)
	if err != nil {
		return err
	}
	if len(items) > 0 {
		return awsapi.ValidationException("One or more parameter values were invalid: the table %s must be empty to become a global table with MultiRegionConsistency STRONG", t.name)
	}
	return nil
}

// created lists the Regions that ReplicaUpdates (or
// GlobalTableWitnessUpdates) entries create.
func created(updates []replicaUpdate) []string {
	var out []string
	for _, u := range updates {
		if u.Create != nil {
			out = append(out, u.Create.RegionName)
		}
	}
	return out
}

// strong reports whether t is a replica of an MRSC global table.
func (t *table) strong() bool { return t.consistency == consistencyStrong }

// refuseOnStrong returns the ValidationException of an operation that MRSC
// global tables do not support (transactions, Time to Live), or nil.
func refuseOnStrong(t *table, operation string) error {
	if !t.strong() {
		return nil
	}
	return awsapi.ValidationException("%s is not supported on the table %s: it is a global table with multi-Region strong consistency (MultiRegionConsistency STRONG)", operation, t.name)
}

// describeConsistencyLocked adds a global table's consistency mode and its
// witness to its description.
func describeConsistencyLocked(t *table, d map[string]any) {
	if len(t.replicas) == 0 {
		return
	}
	d["MultiRegionConsistency"] = consistencyEventual
	if !t.strong() {
		return
	}
	d["MultiRegionConsistency"] = consistencyStrong
	if t.witness != "" {
		d["GlobalTableWitnesses"] = []map[string]any{{"RegionName": t.witness, "WitnessStatus": "ACTIVE"}}
	}
}
