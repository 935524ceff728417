package provision

import (
	"context"
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/outboxkit/terraform-provider-outbox/internal/awsops"
)

// describeTable returns the table, or a NotFoundError when it does not
// exist.
func (c *Provisioner) describeTable(ctx context.Context, name string) (*types.TableDescription, error) {
	out, err := c.DynamoDB.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(name)})
	if err != nil {
		return nil, awsops.NotFound("table", name, err)
	}
	return out.Table, nil
}

// ensureTable creates the dedicated table or adopts the existing one, and
// makes sure it has a usable stream, the pending index and TTL. It records
// in st what it created or added.
func (c *Provisioner) ensureTable(ctx context.Context, s Spec, st *State) error {
	t := s.OutboxTable()
	if err := s.CheckRegion(c.DynamoDB.Options().Region); err != nil {
		return err
	}
	desc, err := c.describeTable(ctx, t.Name)
	absent := errors.Is(err, awsops.ErrNotFound)
	if err != nil && !absent {
		return fmt.Errorf("reading table (%s): %w", t.Name, err)
	}
	owned := !s.Table.Existing
	if err := checkConsistency(desc); err != nil {
		return fmt.Errorf("adopting table (%s): %w", t.Name, err)
	}
	if absent {
		if !owned {
			return fmt.Errorf("adopting table (%s): %w", t.Name, invalid("Table.Existing", "create the table first, or leave it unset to have the pipeline create a dedicated table", "is set, but the table does not exist"))
		}
		if desc, err = c.createTable(ctx, s); err != nil {
			return fmt.Errorf("creating table (%s): %w", t.Name, err)
		}
		st.TableName, st.TableOwned = t.Name, true
	} else if owned && st.TableName == "" {
		return fmt.Errorf("creating table (%s): %w", t.Name, invalid("Table.Existing", "set it to adopt the table, or choose another pipeline name", "is unset, but a table of that name already exists"))
	}
	verb := "adopting"
	if owned {
		verb = "updating"
	}
	st.TableName, st.TableOwned = t.Name, owned
	if err := c.recordTable(st, desc); err != nil {
		return fmt.Errorf("%s table (%s): %w", verb, t.Name, err)
	}
	if err := checkKeys(s, desc); err != nil {
		return fmt.Errorf("%s table (%s): %w", verb, t.Name, err)
	}
	if err := c.claimTable(ctx, s, st.TableARN); err != nil {
		return fmt.Errorf("%s table (%s): %w", verb, t.Name, err)
	}
	if err := c.ensureStream(ctx, s, st, desc); err != nil {
		return fmt.Errorf("%s table (%s): %w", verb, t.Name, err)
	}
	if err := c.ensurePendingIndex(ctx, s, st); err != nil {
		return fmt.Errorf("%s table (%s): %w", verb, t.Name, err)
	}
	if err := c.ensureTTL(ctx, s, st); err != nil {
		return fmt.Errorf("%s table (%s): %w", verb, t.Name, err)
	}
	if owned {
		if err := c.ensureReplicas(ctx, s, st); err != nil {
			return fmt.Errorf("%s table (%s): %w", verb, t.Name, err)
		}
		if err := c.ensureTableProtection(ctx, s, st); err != nil {
			return fmt.Errorf("%s table (%s): %w", verb, t.Name, err)
		}
	}
	if owned && st.TableARN != "" {
		if err := awsops.SyncTableTags(ctx, c.DynamoDB, st.TableARN, s.tags()); err != nil {
			return fmt.Errorf("tagging table (%s): %w", t.Name, err)
		}
	}
	return nil
}

func (c *Provisioner) recordTable(st *State, desc *types.TableDescription) error {
	st.TableARN = aws.ToString(desc.TableArn)
	a, err := AccountOf(st.TableARN)
	if err != nil {
		return fmt.Errorf("reading the account from the table ARN: %w", err)
	}
	st.Partition, st.Region, st.AccountID = a.Partition, a.Region, a.ID
	st.StreamARN, st.StreamViewType = "", ""
	if desc.StreamSpecification != nil && aws.ToBool(desc.StreamSpecification.StreamEnabled) {
		st.StreamARN = aws.ToString(desc.LatestStreamArn)
		st.StreamViewType = string(desc.StreamSpecification.StreamViewType)
	}
	return nil
}

func (c *Provisioner) createTable(ctx context.Context, s Spec) (*types.TableDescription, error) {
	t := s.OutboxTable()
	t.NoPendingIndex = s.Table.PendingIndexDisabled
	in := t.CreateTableInput()
	in.StreamSpecification = &types.StreamSpecification{StreamEnabled: aws.Bool(true), StreamViewType: s.streamViewType()}
	in.Tags = awsops.TableTagList(s.tags())
	in.DeletionProtectionEnabled = s.Table.DeletionProtection
	if s.Table.KMSKeyARN != "" {
		in.SSESpecification = awsops.TableSSE(s.Table.KMSKeyARN)
	}
	if _, err := c.DynamoDB.CreateTable(ctx, in); err != nil {
		return nil, err
	}
	return c.waitTableActive(ctx, t.Name)
}

// waitTableActive waits until the table and all its indexes are ACTIVE.
func (c *Provisioner) waitTableActive(ctx context.Context, name string) (*types.TableDescription, error) {
	return awsops.WaitTableActive(ctx, c.waiter(), c.DynamoDB, name)
}

func checkKeys(s Spec, desc *types.TableDescription) error {
	t := s.OutboxTable()
	types_ := map[string]types.ScalarAttributeType{}
	for _, a := range desc.AttributeDefinitions {
		types_[aws.ToString(a.AttributeName)] = a.AttributeType
	}
	var hash, rng string
	for _, k := range desc.KeySchema {
		switch k.KeyType {
		case types.KeyTypeHash:
			hash = aws.ToString(k.AttributeName)
		case types.KeyTypeRange:
			rng = aws.ToString(k.AttributeName)
		}
	}
	if hash != t.PartitionKey || rng != t.SortKey {
		return invalidAgainst("Table.PartitionKey", []string{"Table.SortKey"}, "set it and the sort key to the table's key attributes (the outbox needs a sort key)",
			"and the sort key are (%q, %q), but the table's key is (%q, %q)", t.PartitionKey, t.SortKey, hash, rng)
	}
	if types_[hash] != types.ScalarAttributeTypeS || types_[rng] != types.ScalarAttributeTypeS {
		return fmt.Errorf("its key attributes %q and %q must both be strings (S) to hold outbox items: use a table with string keys", hash, rng)
	}
	return nil
}

// checkConsistency refuses a global table with multi-Region strong
// consistency (MRSC): it refuses transactions, which the writer commits
// its events with, and TTL, which expires published items ("How DynamoDB
// global tables work", DynamoDB developer guide). A nil desc (no table yet)
// passes.
func checkConsistency(desc *types.TableDescription) error {
	if desc == nil || desc.MultiRegionConsistency != types.MultiRegionConsistencyStrong {
		return nil
	}
	return invalid("Table.Existing", "adopt a multi-Region eventually consistent (MREC) global table, the default consistency mode, or a single-Region table",
		"names a global table with multi-Region strong consistency (MRSC), which refuses the transactions the outbox's writer commits events with and the TTL that expires published items")
}

// CheckAdoptable reports, before anything is changed, an adopted table that
// the pipeline cannot use: a global table with multi-Region strong
// consistency, or one whose key is not the Spec's (s with defaults). A
// table that does not exist or cannot be read passes: apply checks again.
func (c *Provisioner) CheckAdoptable(ctx context.Context, s Spec) error {
	if !s.Table.Existing {
		return nil
	}
	desc, err := c.describeTable(ctx, s.Table.Name)
	if err != nil {
		return nil //nolint:nilerr // apply reads the table again and reports what it finds
	}
	if err := checkConsistency(desc); err != nil {
		return err
	}
	return checkKeys(s, desc)
}

// StreamViewNewImage is the view type of the stream that the pipeline
// enables.
const StreamViewNewImage = string(types.StreamViewTypeNewImage)

// HasNewImage reports whether a stream of the view type carries the new
// image of an item, which the relay reads.
func HasNewImage(viewType string) bool {
	return viewType == string(types.StreamViewTypeNewImage) || viewType == string(types.StreamViewTypeNewAndOldImages)
}

// ensureStream enables the table's stream: NEW_IMAGE, or NEW_AND_OLD_IMAGES
// on a dedicated global table (streamViewType). A stream of another view
// type that lacks the new image, or a NEW_IMAGE one of a dedicated table
// that becomes global, is replaced on a dedicated table (DynamoDB changes a
// view type only by disabling the stream and enabling a new one, once the
// table is ACTIVE again) and refused on an adopted one. The mapping then
// moves to the new stream (ensureMapping); events written meanwhile are
// still PENDING, and the reconciler publishes them.
func (c *Provisioner) ensureStream(ctx context.Context, s Spec, st *State, desc *types.TableDescription) error {
	want := types.StreamViewTypeNewImage
	if st.TableOwned {
		want = s.streamViewType()
	}
	if spec := desc.StreamSpecification; spec != nil && aws.ToBool(spec.StreamEnabled) {
		if s.KeepsStream(string(spec.StreamViewType)) {
			return nil
		}
		if !st.TableOwned {
			return fmt.Errorf("its stream has view type %s, which lacks the new image that the relay reads: change it to NEW_IMAGE or NEW_AND_OLD_IMAGES (disable the stream, then enable it with that view type) and apply again", spec.StreamViewType)
		}
		if err := c.disableStream(ctx, st.TableName); err != nil {
			return fmt.Errorf("replacing its stream of view type %s with a %s one: %w", spec.StreamViewType, want, err)
		}
	}
	_, err := c.DynamoDB.UpdateTable(ctx, &dynamodb.UpdateTableInput{
		TableName:           aws.String(st.TableName),
		StreamSpecification: &types.StreamSpecification{StreamEnabled: aws.Bool(true), StreamViewType: want},
	})
	if err != nil {
		return fmt.Errorf("enabling its stream: %w", err)
	}
	if !st.TableOwned {
		st.Added.Stream = true
	}
	d, err := c.waitTableActive(ctx, st.TableName)
	if err != nil {
		return err
	}
	return c.recordTable(st, d)
}

// disableStream disables the table's stream and waits until the table is
// ACTIVE again, when another stream may be enabled. The disabled stream
// stays readable for 24 hours, so a mapping on it finishes its records.
func (c *Provisioner) disableStream(ctx context.Context, table string) error {
	return c.updateTable(ctx, &dynamodb.UpdateTableInput{
		TableName:           aws.String(table),
		StreamSpecification: &types.StreamSpecification{StreamEnabled: aws.Bool(false)},
	}, "disabling the stream")
}

// updateTable makes the change of in to the table and waits until the
// table is ACTIVE again; what names the change in the error.
func (c *Provisioner) updateTable(ctx context.Context, in *dynamodb.UpdateTableInput, what string) error {
	if err := awsops.UpdateTable(ctx, c.waiter(), c.DynamoDB, in); err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	return nil
}

func (c *Provisioner) ensurePendingIndex(ctx context.Context, s Spec, st *State) error {
	t := s.OutboxTable()
	desc, err := c.describeTable(ctx, st.TableName)
	if err != nil {
		return fmt.Errorf("reading it: %w", err)
	}
	index, attrs := t.PendingIndex()
	if s.Table.PendingIndexDisabled {
		// The functions scan once they are updated; the index goes after
		// them (dropFormerPendingIndex).
		if st.PendingIndexARN != "" && st.FormerPendingIndex == "" && hasIndex(desc, indexName(st.PendingIndexARN)) {
			st.FormerPendingIndex = indexName(st.PendingIndexARN)
		}
		st.PendingIndexARN = ""
		return nil
	}
	if former := indexName(st.PendingIndexARN); st.TableOwned && st.PendingIndexARN != "" && former != t.PendingIndexName && st.FormerPendingIndex == "" {
		// A rename: the new index is built beside the old one, which the
		// functions use until they are updated (dropFormerPendingIndex).
		st.FormerPendingIndex = former
	}
	st.PendingIndexARN = IndexARN(st.TableARN, t.PendingIndexName)
	for _, g := range desc.GlobalSecondaryIndexes {
		if aws.ToString(g.IndexName) != t.PendingIndexName {
			continue
		}
		if !sameKeySchema(g.KeySchema, index.KeySchema) {
			return invalid("Table.PendingIndexName", "rename it, or remove that index", "%q names an index of the table with another key schema than the pending index (%s HASH, %s RANGE)",
				t.PendingIndexName, *index.KeySchema[0].AttributeName, *index.KeySchema[1].AttributeName)
		}
		if g.IndexStatus != types.IndexStatusActive {
			_, err := c.waitTableActive(ctx, st.TableName)
			return err
		}
		return nil
	}
	_, err = c.DynamoDB.UpdateTable(ctx, &dynamodb.UpdateTableInput{
		TableName:            aws.String(st.TableName),
		AttributeDefinitions: attrs,
		GlobalSecondaryIndexUpdates: []types.GlobalSecondaryIndexUpdate{{Create: &types.CreateGlobalSecondaryIndexAction{
			IndexName: index.IndexName, KeySchema: index.KeySchema, Projection: index.Projection,
		}}},
	})
	if err != nil {
		return fmt.Errorf("creating the pending index %s: %w", t.PendingIndexName, err)
	}
	if !st.TableOwned {
		st.Added.PendingIndex = true
	}
	_, err = c.waitTableActive(ctx, st.TableName)
	return err
}

// dropFormerPendingIndex deletes the pending index that a rename replaced,
// once the functions query the new one. DynamoDB backfills a new index from
// the table's items, so the pending items are all in the new one.
func (c *Provisioner) dropFormerPendingIndex(ctx context.Context, st *State) error {
	if st.FormerPendingIndex == "" || !st.TableOwned {
		return nil
	}
	if err := c.deleteIndex(ctx, st.TableName, st.FormerPendingIndex); err != nil {
		return fmt.Errorf("updating table (%s): deleting the former pending index: %w", st.TableName, err)
	}
	st.FormerPendingIndex = ""
	return nil
}

// deleteIndex deletes a global secondary index, if it exists, and waits
// until it is gone.
func (c *Provisioner) deleteIndex(ctx context.Context, table, index string) error {
	desc, err := c.describeTable(ctx, table)
	if err != nil || !hasIndex(desc, index) {
		return awsops.IgnoreNotFound(err)
	}
	_, err = c.DynamoDB.UpdateTable(ctx, &dynamodb.UpdateTableInput{
		TableName:                   aws.String(table),
		GlobalSecondaryIndexUpdates: []types.GlobalSecondaryIndexUpdate{{Delete: &types.DeleteGlobalSecondaryIndexAction{IndexName: aws.String(index)}}},
	})
	if err != nil {
		return fmt.Errorf("deleting the index %s: %w", index, err)
	}
	return c.waitFor(ctx, "index "+index+" to be deleted", func(ctx context.Context) (bool, error) {
		d, err := c.describeTable(ctx, table)
		if err != nil {
			return errors.Is(err, awsops.ErrNotFound), awsops.IgnoreNotFound(err)
		}
		return !hasIndex(d, index) && d.TableStatus == types.TableStatusActive, nil
	})
}

func sameKeySchema(a, b []types.KeySchemaElement) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if aws.ToString(a[i].AttributeName) != aws.ToString(b[i].AttributeName) || a[i].KeyType != b[i].KeyType {
			return false
		}
	}
	return true
}

func (c *Provisioner) ensureTTL(ctx context.Context, s Spec, st *State) error {
	attr, err := awsops.TTLAttribute(ctx, c.DynamoDB, st.TableName)
	if err != nil {
		return fmt.Errorf("reading its TTL: %w", err)
	}
	if attr != "" {
		// An adopted table keeps its own TTL attribute: there is only one.
		st.TTLAttribute = attr
		return nil
	}
	want := s.OutboxTable().TTLAttribute
	_, err = c.DynamoDB.UpdateTimeToLive(ctx, &dynamodb.UpdateTimeToLiveInput{
		TableName:               aws.String(st.TableName),
		TimeToLiveSpecification: &types.TimeToLiveSpecification{AttributeName: aws.String(want), Enabled: aws.Bool(true)},
	})
	if err != nil {
		return fmt.Errorf("enabling TTL on %s: %w", want, err)
	}
	st.TTLAttribute = want
	if !st.TableOwned {
		st.Added.TTL = true
	}
	return nil
}

// deleteTable deletes an owned table, or reverts what the pipeline added to
// an adopted one. It clears from st what it removed.
func (c *Provisioner) deleteTable(ctx context.Context, st *State) error {
	if st.TableName == "" {
		return nil
	}
	if st.TableOwned {
		if err := c.removeReplicas(ctx, st); awsops.IgnoreNotFound(err) != nil {
			return fmt.Errorf("deleting table (%s): %w", st.TableName, err)
		}
		if err := c.unprotectTable(ctx, st.TableName); err != nil {
			return fmt.Errorf("deleting table (%s): turning its deletion protection off: %w", st.TableName, err)
		}
		_, err := c.DynamoDB.DeleteTable(ctx, &dynamodb.DeleteTableInput{TableName: aws.String(st.TableName)})
		if err := awsops.IgnoreNotFound(err); err != nil {
			return fmt.Errorf("deleting table (%s): %w", st.TableName, err)
		}
		err = c.waitFor(ctx, "table "+st.TableName+" to be deleted", func(ctx context.Context) (bool, error) {
			_, err := c.describeTable(ctx, st.TableName)
			return errors.Is(err, awsops.ErrNotFound), awsops.IgnoreNotFound(err)
		})
		if err != nil {
			return fmt.Errorf("deleting table (%s): %w", st.TableName, err)
		}
		st.clearTable()
		return nil
	}
	if err := c.revertAdopted(ctx, st); err != nil {
		return fmt.Errorf("reverting changes to table (%s): %w", st.TableName, err)
	}
	st.clearTable()
	return nil
}

func (st *State) clearTable() {
	st.TableName, st.TableARN, st.StreamARN, st.StreamViewType, st.PendingIndexARN, st.TTLAttribute = "", "", "", "", "", ""
	st.TableOwned, st.Added = false, Added{}
}

func (c *Provisioner) revertAdopted(ctx context.Context, st *State) error {
	_, err := c.describeTable(ctx, st.TableName)
	if errors.Is(err, awsops.ErrNotFound) {
		return nil // the table is gone: nothing to revert
	}
	if err != nil {
		return err
	}
	if st.Added.TTL {
		_, err := c.DynamoDB.UpdateTimeToLive(ctx, &dynamodb.UpdateTimeToLiveInput{
			TableName:               aws.String(st.TableName),
			TimeToLiveSpecification: &types.TimeToLiveSpecification{AttributeName: aws.String(st.TTLAttribute), Enabled: aws.Bool(false)},
		})
		if err != nil && !isValidation(err, "TimeToLive is already disabled") {
			return fmt.Errorf("disabling TTL on %s: %w", st.TTLAttribute, err)
		}
		st.Added.TTL = false
	}
	if st.Added.PendingIndex {
		if err := c.deleteIndex(ctx, st.TableName, indexName(st.PendingIndexARN)); err != nil {
			return err
		}
		st.Added.PendingIndex = false
	}
	if err := c.releaseTable(ctx, st); err != nil {
		return fmt.Errorf("removing its tag %s: %w", TagAdoptedBy, err)
	}
	if st.Added.Stream {
		_, err := c.DynamoDB.UpdateTable(ctx, &dynamodb.UpdateTableInput{
			TableName:           aws.String(st.TableName),
			StreamSpecification: &types.StreamSpecification{StreamEnabled: aws.Bool(false)},
		})
		if err != nil && !isValidation(err, "already disabled") {
			return fmt.Errorf("disabling its stream: %w", err)
		}
		st.Added.Stream = false
	}
	return nil
}

func indexName(indexARN string) string {
	for i := len(indexARN) - 1; i >= 0; i-- {
		if indexARN[i] == '/' {
			return indexARN[i+1:]
		}
	}
	return indexARN
}

func hasIndex(d *types.TableDescription, name string) bool {
	for _, g := range d.GlobalSecondaryIndexes {
		if aws.ToString(g.IndexName) == name {
			return true
		}
	}
	return false
}

func (c *Provisioner) readTable(ctx context.Context, s Spec, st *State, d *Drift) error {
	if st.TableName == "" {
		return nil
	}
	desc, err := c.describeTable(ctx, st.TableName)
	if errors.Is(err, awsops.ErrNotFound) {
		d.AddMissing(ComponentTable)
		if st.TableOwned {
			st.clearTable()
		}
		return nil
	}
	if err != nil {
		return fmt.Errorf("reading table (%s): %w", st.TableName, err)
	}
	if err := c.recordTable(st, desc); err != nil {
		return fmt.Errorf("reading table (%s): %w", st.TableName, err)
	}
	if err := c.readTableProtection(ctx, s, *st, desc, d); err != nil {
		return err
	}
	if st.StreamARN == "" {
		d.AddMissing(ComponentStream)
	} else if !HasNewImage(st.StreamViewType) {
		d.AddChanged(ComponentStream, "stream_view_type")
	}
	t := s.OutboxTable()
	index, _ := t.PendingIndex()
	found := false
	for _, g := range desc.GlobalSecondaryIndexes {
		if aws.ToString(g.IndexName) == t.PendingIndexName {
			found = true
			if !sameKeySchema(g.KeySchema, index.KeySchema) {
				d.AddChanged(ComponentPendingIndex, "key_schema")
			}
		}
	}
	switch {
	case s.Table.PendingIndexDisabled && found:
		d.AddChanged(ComponentPendingIndex, "enabled")
	case !s.Table.PendingIndexDisabled && !found:
		d.AddMissing(ComponentPendingIndex)
	}
	attr, err := awsops.TTLAttribute(ctx, c.DynamoDB, st.TableName)
	if err != nil {
		return fmt.Errorf("reading table (%s) TTL: %w", st.TableName, err)
	}
	switch {
	case attr == "":
		d.AddMissing(ComponentTTL)
	case st.TTLAttribute != "" && attr != st.TTLAttribute:
		d.AddChanged(ComponentTTL, "attribute_name")
	}
	return nil
}

func (c *Provisioner) lookupTable(ctx context.Context, p *pass) error {
	s, st, t := &p.s, p.st, p.rc.Table
	desc, err := c.describeTable(ctx, t.Name)
	if err != nil && !errors.Is(err, awsops.ErrNotFound) {
		return fmt.Errorf("reading table (%s): %w", t.Name, err)
	}
	if err == nil {
		if err := c.recordTable(st, desc); err != nil {
			return err
		}
		tags, _ := awsops.TableTags(ctx, c.DynamoDB, st.TableARN)
		st.TableOwned = t.Name == p.names().Table && tags[TagPipeline] == s.Name
		st.TTLAttribute = t.TTLAttribute
		st.PendingIndexARN = IndexARN(st.TableARN, t.PendingIndexName)
		s.Table.DeletionProtection = ptr(aws.ToBool(desc.DeletionProtectionEnabled))
		s.Table.KMSKeyARN = awsops.TableKMSKey(desc)
		if st.TableOwned {
			s.Table.ReplicaRegions = replicaRegions(desc, st.Region)
		}
		if pitr, err := awsops.PointInTimeRecovery(ctx, c.DynamoDB, t.Name); err == nil {
			s.Table.PointInTimeRecovery = ptr(pitr)
		}
	}
	s.Table.Existing = !st.TableOwned
	if !st.TableOwned {
		st.Added = parseAdded(p.functions[ComponentRelayFunction].Tags[TagAdded])
	}
	return nil
}

var tableComponent = componentDef{
	Name: ComponentTable, Recorded: func(st State) bool { return st.TableName != "" },
	Ensure: func(c *Provisioner, ctx context.Context, p *pass) error { return c.ensureTable(ctx, p.s, p.st) },
	Read: func(c *Provisioner, ctx context.Context, p *pass) error {
		if err := c.readTable(ctx, p.s, p.st, p.d); err != nil {
			return err
		}
		p.res = p.s.resources(p.st.account(), p.st.TableARN, p.st.QueueARN)
		return nil
	},
	Remove: (*Provisioner).deleteTable, Lookup: (*Provisioner).lookupTable,
}

// ensureTableProtection brings the deletion protection and point-in-time
// recovery of a dedicated table to the Spec's.
func (c *Provisioner) ensureTableProtection(ctx context.Context, s Spec, st *State) error {
	desc, err := c.describeTable(ctx, st.TableName)
	if err != nil {
		return fmt.Errorf("reading it: %w", err)
	}
	if want := *s.Table.DeletionProtection; aws.ToBool(desc.DeletionProtectionEnabled) != want {
		if err := c.updateTable(ctx, &dynamodb.UpdateTableInput{
			TableName: aws.String(st.TableName), DeletionProtectionEnabled: aws.Bool(want),
		}, fmt.Sprintf("setting its deletion protection to %t", want)); err != nil {
			return err
		}
	}
	if want := s.Table.KMSKeyARN; awsops.TableKMSKey(desc) != want {
		if err := c.updateTable(ctx, &dynamodb.UpdateTableInput{
			TableName: aws.String(st.TableName), SSESpecification: awsops.TableSSE(want),
		}, fmt.Sprintf("setting its encryption key to %q", want)); err != nil {
			return err
		}
	}
	have, err := awsops.PointInTimeRecovery(ctx, c.DynamoDB, st.TableName)
	if err != nil {
		return fmt.Errorf("reading its point-in-time recovery: %w", err)
	}
	if want := *s.Table.PointInTimeRecovery; have != want {
		if _, err := c.DynamoDB.UpdateContinuousBackups(ctx, &dynamodb.UpdateContinuousBackupsInput{
			TableName:                        aws.String(st.TableName),
			PointInTimeRecoverySpecification: &types.PointInTimeRecoverySpecification{PointInTimeRecoveryEnabled: aws.Bool(want)},
		}); err != nil {
			return fmt.Errorf("setting its point-in-time recovery to %t: %w", want, err)
		}
	}
	return nil
}

// readTableProtection records drift of the protection settings of a
// dedicated table.
func (c *Provisioner) readTableProtection(ctx context.Context, s Spec, st State, desc *types.TableDescription, d *Drift) error {
	if !st.TableOwned {
		return nil
	}
	var fields []string
	if aws.ToBool(desc.DeletionProtectionEnabled) != *s.Table.DeletionProtection {
		fields = append(fields, "deletion_protection")
	}
	if awsops.TableKMSKey(desc) != s.Table.KMSKeyARN {
		fields = append(fields, "kms_key_arn")
	}
	pitr, err := awsops.PointInTimeRecovery(ctx, c.DynamoDB, st.TableName)
	if err != nil {
		return fmt.Errorf("reading table (%s) point-in-time recovery: %w", st.TableName, err)
	}
	if pitr != *s.Table.PointInTimeRecovery {
		fields = append(fields, "point_in_time_recovery")
	}
	fields = append(fields, readReplicas(s, st, desc)...)
	d.AddChanged(ComponentTable, fields...)
	return nil
}

// unprotectTable turns off the deletion protection of a table about to be
// deleted. Delete calls it only after checkUndelivered passed.
func (c *Provisioner) unprotectTable(ctx context.Context, table string) error {
	desc, err := c.describeTable(ctx, table)
	if err != nil || !aws.ToBool(desc.DeletionProtectionEnabled) {
		return awsops.IgnoreNotFound(err)
	}
	return c.updateTable(ctx, &dynamodb.UpdateTableInput{
		TableName: aws.String(table), DeletionProtectionEnabled: aws.Bool(false),
	}, "turning its deletion protection off")
}

// TagAdoptedBy is set on an adopted table to the name of the pipeline that
// adopted it. A table holds the outbox of one pipeline: a second pipeline
// that finds the tag refuses to adopt the table, so that it can never
// revert the stream, index or TTL that the first one still needs.
const TagAdoptedBy = "outbox:adopted-by"

// claimTable checks that no other pipeline owns or adopted the table, and
// tags an adopted one with the pipeline's name.
func (c *Provisioner) claimTable(ctx context.Context, s Spec, arn string) error {
	tags, err := awsops.TableTags(ctx, c.DynamoDB, arn)
	if err != nil {
		return fmt.Errorf("reading its tags: %w", err)
	}
	for _, k := range []string{TagAdoptedBy, TagPipeline} {
		if other := tags[k]; other != "" && other != s.Name {
			return fmt.Errorf("it belongs to the outbox pipeline %s (tag %s): a table holds the outbox of one pipeline, since the pipelines would undo each other's stream, index and TTL; "+
				"give this pipeline its own table, or use pipeline %s's", other, k, other)
		}
	}
	if !s.Table.Existing || tags[TagAdoptedBy] == s.Name {
		return nil
	}
	_, err = c.DynamoDB.TagResource(ctx, &dynamodb.TagResourceInput{
		ResourceArn: aws.String(arn), Tags: []types.Tag{{Key: aws.String(TagAdoptedBy), Value: aws.String(s.Name)}},
	})
	if err != nil {
		return fmt.Errorf("tagging it %s=%s: %w", TagAdoptedBy, s.Name, err)
	}
	return nil
}

// releaseTable removes the adoption tag of the pipeline from an adopted
// table, if it is the pipeline's own.
func (c *Provisioner) releaseTable(ctx context.Context, st *State) error {
	if st.TableARN == "" {
		return nil
	}
	tags, err := awsops.TableTags(ctx, c.DynamoDB, st.TableARN)
	if err != nil || tags[TagAdoptedBy] != st.Name {
		return err
	}
	_, err = c.DynamoDB.UntagResource(ctx, &dynamodb.UntagResourceInput{ResourceArn: aws.String(st.TableARN), TagKeys: []string{TagAdoptedBy}})
	return err
}
