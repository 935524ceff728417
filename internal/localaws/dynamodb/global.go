package dynamodb

import (
	"maps"
	"regexp"
	"slices"
	"time"

	mini "github.com/outboxkit/terraform-provider-outbox/third_party/minidyn/server"

	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/awsapi"
)

// GlobalTableVersion is the version of global tables served: 2019.11.21,
// replicas added and removed with UpdateTable's ReplicaUpdates.
const GlobalTableVersion = "2019.11.21"

// replica is another Region's replica of a table, as this one sees it.
type replica struct {
	status string // CREATING, ACTIVE, CREATION_FAILED
}

// stamp is the time and Region of an item's last write, which decides
// between concurrent writes: the later write wins, and of two at the same
// time the one of the greater Region name.
type stamp struct {
	at     time.Time
	region string
}

func (s stamp) after(o stamp) bool {
	return s.at.After(o.at) || (s.at.Equal(o.at) && s.region > o.region)
}

// replicaUpdate is one entry of UpdateTable's ReplicaUpdates.
type replicaUpdate struct {
	Create *struct{ RegionName string }
	Delete *struct{ RegionName string }
}

var regionNameRE = regexp.MustCompile(`^[a-z]{2}(-[a-z]+)+-\d{1,2}$`)

// validateReplicaUpdates checks ReplicaUpdates against the table, as
// UpdateTable does for version 2019.11.21: one Region per update, a Region
// other than the table's, a replica to delete that exists, one to create
// that does not, on-demand capacity (a provisioned table must be
// auto-scaled, which the stack does not serve) and a stream that is off or
// NEW_AND_OLD_IMAGES.
func (s *Service) validateReplicaUpdates(t *table, in *updateTableInput) error {
	if len(in.ReplicaUpdates) == 0 {
		return nil
	}
	if s.opts.Replication == nil {
		return awsapi.ValidationException("One or more parameter values were invalid: global tables are not served by this stack")
	}
	if len(in.GlobalSecondaryIndexUpdates) > 0 || in.StreamSpecification != nil {
		return awsapi.ValidationException("One or more parameter values were invalid: ReplicaUpdates cannot be combined with GlobalSecondaryIndexUpdates or StreamSpecification in one UpdateTable")
	}
	for _, u := range in.ReplicaUpdates {
		if (u.Create == nil) == (u.Delete == nil) {
			return awsapi.ValidationException("One or more parameter values were invalid: each ReplicaUpdates entry needs exactly one of Create and Delete")
		}
		region := ""
		if u.Create != nil {
			region = u.Create.RegionName
		} else {
			region = u.Delete.RegionName
		}
		_, exists := t.replicas[region]
		switch {
		case !regionNameRE.MatchString(region):
			return awsapi.ValidationException("One or more parameter values were invalid: RegionName %q is not a Region (such as eu-west-1)", region)
		case region == s.env.Region:
			return awsapi.ValidationException("One or more parameter values were invalid: the table %s is already in %s; a replica must be in another Region", t.name, region)
		case u.Delete != nil && !exists:
			return awsapi.ValidationException("One or more parameter values were invalid: the table %s has no replica in %s", t.name, region)
		case u.Create != nil && exists:
			return awsapi.ValidationException("One or more parameter values were invalid: the table %s already has a replica in %s", t.name, region)
		}
	}
	if t.billingMode != "PAY_PER_REQUEST" && slices.ContainsFunc(in.ReplicaUpdates, func(u replicaUpdate) bool { return u.Create != nil }) {
		return awsapi.ValidationException("Table write capacity should either be Pay-Per-Request or AutoScaled.")
	}
	if t.stream != nil && t.stream.viewType != "NEW_AND_OLD_IMAGES" {
		return awsapi.ValidationException("One or more parameter values were invalid: a global table's stream must have StreamViewType NEW_AND_OLD_IMAGES, not %s: disable the stream or re-enable it with NEW_AND_OLD_IMAGES first", t.stream.viewType)
	}
	return nil
}

// applyReplicaUpdatesLocked starts creating and deleting replicas; the
// work happens in the other Regions, asynchronously, as on AWS. A table
// without a stream gets one of NEW_AND_OLD_IMAGES. A new global table
// takes its consistency mode and witness.
func (s *Service) applyReplicaUpdatesLocked(t *table, in *updateTableInput) error {
	if in.MultiRegionConsistency == consistencyStrong {
		t.consistency = consistencyStrong
		if w := created(in.GlobalTableWitnessUpdates); len(w) == 1 {
			t.witness = w[0]
		}
	}
	for _, u := range in.ReplicaUpdates {
		if u.Delete != nil {
			s.removeReplicaLocked(t, u.Delete.RegionName)
			continue
		}
		if t.stream == nil {
			s.applyStreamUpdateLocked(t, &streamSpec{StreamEnabled: true, StreamViewType: "NEW_AND_OLD_IMAGES"})
		}
		items, err := s.scanAllLocked(t.name)
		if err != nil {
			return err
		}
		if t.replicas == nil {
			t.replicas = map[string]*replica{}
		}
		region := u.Create.RegionName
		t.replicas[region] = &replica{status: "CREATING"}
		s.sendReplicaLocked(t, region, items)
	}
	return nil
}

// sendReplicaLocked has the Region create its replica of t with items,
// then tells this Region and the other replicas that it is ACTIVE.
func (s *Service) sendReplicaLocked(t *table, region string, items []wireItem) {
	spec := replicaSpec{name: t.name, keySchema: t.keySchema, attrDefs: t.attrDefs, gsis: t.gsis, lsis: t.lsis,
		billingMode: t.billingMode, tableClass: t.tableClass, peers: append(slices.Collect(maps.Keys(t.replicas)), s.env.Region),
		consistency: t.consistency, witness: t.witness}
	home, rep := s.env.Region, s.opts.Replication
	rep.send(home, region, false, func(dst *Service) {
		status := "ACTIVE"
		if err := dst.createReplica(spec, items); err != nil {
			dst.env.Logger.Error("creating a global table replica", "table", spec.name, "region", dst.env.Region, "error", err)
			status = "CREATION_FAILED"
		}
		for _, peer := range spec.peers {
			if peer == region {
				continue
			}
			rep.send(region, peer, false, func(p *Service) { p.setReplica(spec.name, region, status) })
		}
	})
}

// replicaSpec is what a Region needs to create its replica of a table.
type replicaSpec struct {
	name, billingMode, tableClass string
	consistency, witness          string
	keySchema                     []keyElement
	attrDefs                      []attrDef
	gsis, lsis                    []*index
	peers                         []string
}

// createReplica creates this Region's replica of a global table, with the
// items the table held (later writes follow through replication).
func (s *Service) createReplica(spec replicaSpec, items []wireItem) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, exists := s.tables[spec.name]; exists {
		return awsapi.ResourceInUseException("Table already exists: %s", spec.name)
	}
	in := createTableInput{TableName: spec.name, KeySchema: spec.keySchema, AttributeDefinitions: spec.attrDefs,
		BillingMode: spec.billingMode, TableClass: spec.tableClass}
	for _, i := range spec.gsis {
		c := *i
		c.status = "ACTIVE"
		in.GlobalSecondaryIndexes = append(in.GlobalSecondaryIndexes, &c)
	}
	for _, i := range spec.lsis {
		c := *i
		in.LocalSecondaryIndexes = append(in.LocalSecondaryIndexes, &c)
	}
	var mIn mini.CreateTableInput
	if err := convert(&in, &mIn); err != nil {
		return err
	}
	if _, err := s.engine.CreateTable(bg, &mIn); err != nil {
		return engineError(err)
	}
	t := &table{name: spec.name, arn: s.tableArn(spec.name), id: awsapi.NewUUID(), created: s.env.Time(),
		keySchema: spec.keySchema, attrDefs: spec.attrDefs, gsis: in.GlobalSecondaryIndexes, lsis: in.LocalSecondaryIndexes,
		billingMode: spec.billingMode, tableClass: spec.tableClass, tags: map[string]string{}, replicas: map[string]*replica{},
		consistency: spec.consistency, witness: spec.witness}
	for _, p := range spec.peers {
		if p != s.env.Region {
			t.replicas[p] = &replica{status: "ACTIVE"}
		}
	}
	t.stream = s.streams.create(t.name, t.arn, t.hashKey(), "NEW_AND_OLD_IMAGES", "")
	t.latestStream = t.stream
	s.tables[t.name] = t
	for _, it := range items {
		if _, err := s.engine.PutItem(bg, &mini.PutItemInput{TableName: &t.name, Item: it}); err != nil {
			return engineError(err)
		}
	}
	return nil
}

// setReplica records the status of a Region's replica of a table ("" to
// forget it).
func (s *Service) setReplica(name, region, status string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, ok := s.tables[name]
	if !ok {
		return
	}
	if status == "" {
		delete(t.replicas, region)
		if len(t.replicas) == 0 {
			t.consistency, t.witness = "", ""
		}
		return
	}
	if t.replicas == nil {
		t.replicas = map[string]*replica{}
	}
	t.replicas[region] = &replica{status: status}
}

// removeReplicaLocked deletes the Region's replica of t: the replica is
// DELETING until that Region has dropped it, which then tells this Region
// and the other replicas that it is gone, as DescribeTable shows on AWS.
func (s *Service) removeReplicaLocked(t *table, region string) {
	t.replicas[region] = &replica{status: "DELETING"}
	name, home, rep := t.name, s.env.Region, s.opts.Replication
	peers := slices.Collect(maps.Keys(t.replicas))
	peers = append(peers, home)
	rep.send(home, region, false, func(dst *Service) {
		dst.dropReplica(name)
		for _, peer := range peers {
			if peer != region {
				rep.send(region, peer, false, func(p *Service) { p.setReplica(name, region, "") })
			}
		}
	})
}

// leaveGlobalTableLocked tells the other replicas that this Region's
// replica of t is deleted (DeleteTable of a replica).
func (s *Service) leaveGlobalTableLocked(t *table) {
	for peer := range t.replicas {
		name, home := t.name, s.env.Region
		s.opts.Replication.send(home, peer, false, func(p *Service) { p.setReplica(name, home, "") })
	}
}

// dropReplica deletes this Region's replica of a table.
func (s *Service) dropReplica(name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, ok := s.tables[name]
	if !ok {
		return
	}
	_, _ = s.engine.DeleteTable(bg, &mini.DeleteTableInput{TableName: &t.name})
	if t.stream != nil {
		s.streams.disable(t.stream.arn)
	}
	delete(s.tables, name)
}

// describeReplicasLocked adds a global table's replicas (the other
// Regions') and version to its description.
func describeReplicasLocked(t *table, d map[string]any) {
	if len(t.replicas) == 0 {
		return
	}
	regions := slices.Sorted(maps.Keys(t.replicas))
	out := make([]map[string]any, 0, len(regions))
	for _, r := range regions {
		out = append(out, map[string]any{"RegionName": r, "ReplicaStatus": t.replicas[r].status})
	}
	d["Replicas"] = out
	d["GlobalTableVersion"] = GlobalTableVersion
}

// replicateLocked stamps local changes of a global table and sends them to
// the other replicas, each after the replication lag.
func (s *Service) replicateLocked(t *table, changes []change) {
	if len(t.replicas) == 0 || s.opts.Replication == nil {
		return
	}
	if t.written == nil {
		t.written = map[string]stamp{}
	}
	st := stamp{at: s.env.Time(), region: s.env.Region}
	for _, c := range changes {
		t.written[keyID(t, c.keys)] = st
	}
	name := t.name
	for region := range t.replicas {
		s.opts.Replication.send(s.env.Region, region, true, func(dst *Service) {
			dst.applyReplicated(name, changes, st)
			s.replicationLatency(name, region, time.Since(st.at))
		})
	}
}

// replicationLatency publishes the ReplicationLatency metric of a write
// that reached the Region receiving, in this (the sending) Region:
// namespace AWS/DynamoDB, dimensions TableName and ReceivingRegion,
// milliseconds, for every pair of Regions ("Monitoring global tables",
// https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/V2globaltables_monitoring.html).
func (s *Service) replicationLatency(table, receiving string, d time.Duration) {
	if s.opts.Metrics == nil {
		return
	}
	if sink := s.opts.Metrics(); sink != nil {
		sink.PutMetric("AWS/DynamoDB", "ReplicationLatency", map[string]string{"TableName": table, "ReceivingRegion": receiving},
			float64(d.Microseconds())/1000, "Milliseconds")
	}
}

// applyReplicated applies another Region's changes to this Region's
// replica, each unless a later write of the item is already here (last
// writer wins); they reach this replica's stream and TTL index like local
// writes, and are not sent on.
func (s *Service) applyReplicated(name string, changes []change, st stamp) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, ok := s.tables[name]
	if !ok {
		return
	}
	if t.written == nil {
		t.written = map[string]stamp{}
	}
	var applied []change
	for _, c := range changes {
		id := keyID(t, c.keys)
		if prev, ok := t.written[id]; ok && !st.after(prev) {
			continue
		}
		old := s.itemLocked(t, c.keys)
		var err error
		if c.newImage == nil {
			_, err = s.engine.DeleteItem(bg, &mini.DeleteItemInput{TableName: &t.name, Key: toWireItem(c.keys)})
		} else {
			_, err = s.engine.PutItem(bg, &mini.PutItemInput{TableName: &t.name, Item: toWireItem(c.newImage)})
		}
		if err != nil {
			s.env.Logger.Error("applying a replicated write", "table", name, "error", err)
			continue
		}
		t.written[id] = st
		applied = append(applied, change{keys: c.keys, oldImage: old, newImage: s.itemLocked(t, c.keys), ttl: c.ttl})
	}
	s.indexTTLLocked(t, applied)
	if t.stream != nil && len(applied) > 0 {
		s.streams.append(t.stream.arn, applied)
	}
}
