package subscription

import (
	"context"
	"fmt"
	"regexp"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/outboxkit/terraform-provider-outbox/consumer"
	"github.com/outboxkit/terraform-provider-outbox/internal/awsops"
)

// The inbox is the consumer kit's DynamoDB table (package consumer, the
// inbox contract): one item per event id, its TTL on consumer.AttrExpiresAt.
// The subscription creates it in that shape, keeps its protection settings
// and TTL as the Spec says, and refuses to delete it while its deletion
// protection is on: the table is the record of the events whose effects
// were applied, and without it every redelivered event would be applied
// again.

// ComponentInbox is the inbox table, as named in a Drift.
const ComponentInbox = "inbox"

// The fields of the inbox that a Drift names, as the provider's schema does.
const (
	InboxFieldDeletionProtection  = "deletion_protection"
	InboxFieldPointInTimeRecovery = "point_in_time_recovery"
	InboxFieldKMSKeyARN           = "kms_key_arn"
	InboxFieldTTL                 = "ttl_attribute"
)

// suffixInbox ends the name of the inbox table.
const suffixInbox = "-inbox"

// InboxTTLAttribute is the inbox table's TTL attribute, the kit's.
const InboxTTLAttribute = consumer.AttrExpiresAt

// InboxSpec configures the inbox table: a dedicated one, <name>-inbox, or
// an existing table that the subscription adopts.
type InboxSpec struct {
	// Existing makes the subscription adopt the table called Name instead
	// of creating one: it checks the key, enables TTL on the kit's
	// attribute if TTL is off, and tags the table as the inbox of this
	// subscription (TagInboxOf), so that no other subscription adopts it.
	// Delete reverts what it added and never deletes the table.
	Existing bool
	// Name of the adopted table; required when Existing, empty otherwise.
	Name string
	// DeletionProtection of a dedicated table; nil means true. While it is
	// on, Delete (and an Update that removes the inbox) refuses to delete
	// the table. Ignored for an adopted table.
	DeletionProtection *bool
	// PointInTimeRecovery of a dedicated table; nil means true. Ignored
	// for an adopted table.
	PointInTimeRecovery *bool
	// KMSKeyARN encrypts a dedicated table with a customer managed key;
	// empty uses the AWS owned key. Changed in place. Not allowed on an
	// adopted table.
	KMSKeyARN string
}

// Tags on an adopted inbox table. Two consumers sharing an inbox would
// skip each other's events as duplicates: TagInboxOf names the one
// subscription whose inbox it is. TagInboxTTL records that the subscription
// enabled the table's TTL, which Delete then disables again.
const (
	TagInboxOf  = "outbox:inbox-of"
	TagInboxTTL = "outbox:inbox-ttl-enabled-by"
)

func (in InboxSpec) tableName(subscription string) string {
	if in.Existing {
		return in.Name
	}
	return InboxTableName(subscription)
}

// InboxState is what exists of the inbox table, and the settings it was
// last observed with (by Read, Lookup, or after Create or Update).
type InboxState struct {
	TableName string
	TableARN  string
	// Adopted is set for an existing table that the subscription adopted.
	Adopted bool
	// TTLAttribute is the attribute TTL is enabled on; empty when it is off.
	TTLAttribute        string
	DeletionProtection  bool
	PointInTimeRecovery bool
	KMSKeyARN           string
}

// InboxTableName is the name of the inbox table of the subscription called
// name.
func InboxTableName(name string) string { return name + suffixInbox }

func (in InboxSpec) withDefaults() InboxSpec {
	t := true
	if in.DeletionProtection == nil {
		in.DeletionProtection = &t
	}
	if in.PointInTimeRecovery == nil {
		in.PointInTimeRecovery = &t
	}
	return in
}

// inboxComponent is the inbox's row of the components table.
var inboxComponent = componentDef{
	Name: ComponentInbox, Recorded: func(st State) bool { return st.Inbox.TableName != "" },
	Ensure: (*Provisioner).ensureInbox, Read: (*Provisioner).readInbox,
	Remove: (*Provisioner).removeInbox, Lookup: (*Provisioner).lookupInbox,
}

// ensureInbox creates, adopts or updates the inbox table, or removes it
// when the Spec no longer has one.
func (c *Provisioner) ensureInbox(ctx context.Context, p *pass) error {
	st := p.st
	if p.s.Inbox == nil {
		return c.removeInbox(ctx, st)
	}
	in := p.s.Inbox.withDefaults()
	name, verb := in.tableName(p.s.Name), "updating"
	if st.Inbox.TableName != "" && (st.Inbox.TableName != name || st.Inbox.Adopted != in.Existing) {
		// Another table: the former one goes first, as removing the inbox
		// would remove it.
		if err := c.removeInbox(ctx, st); err != nil {
			return err
		}
	}
	desc, err := c.describeTable(ctx, name)
	if err != nil {
		return fmt.Errorf("reading inbox table (%s): %w", name, err)
	}
	switch {
	case desc == nil && in.Existing:
		return fmt.Errorf("adopting inbox table (%s): it does not exist: create it first (string partition key %s), or leave inbox.existing unset to have the subscription create one", name, consumer.AttrEventID)
	case desc == nil:
		if desc, err = c.createInbox(ctx, name, in, p.s.tags()); err != nil {
			return fmt.Errorf("creating inbox table (%s): %w", name, err)
		}
	case in.Existing:
		verb = "adopting"
	case st.Inbox.TableName == "":
		return fmt.Errorf("creating inbox table (%s): a table of that name already exists: adopt it with inbox.existing and inbox.name, import the subscription, or choose another subscription name", name)
	}
	st.Inbox.TableName, st.Inbox.TableARN, st.Inbox.Adopted = name, aws.ToString(desc.TableArn), in.Existing
	if err := checkInboxKey(desc); err != nil {
		return fmt.Errorf("%s inbox table (%s): %w", verb, name, err)
	}
	if in.Existing {
		err = c.adoptInbox(ctx, p.s.Name, st.Inbox)
	} else {
		err = c.ensureInboxSettings(ctx, name, in, desc)
		if err == nil {
			err = awsops.SyncTableTags(ctx, c.DynamoDB, st.Inbox.TableARN, p.s.tags())
		}
	}
	if err != nil {
		return fmt.Errorf("%s inbox table (%s): %w", verb, name, err)
	}
	return c.observeInbox(ctx, &st.Inbox)
}

// adoptInbox claims the adopted table for the subscription and enables its
// TTL if it is off, recording that it did.
func (c *Provisioner) adoptInbox(ctx context.Context, subscription string, in InboxState) error {
	tags, err := awsops.TableTags(ctx, c.DynamoDB, in.TableARN)
	if err != nil {
		return fmt.Errorf("reading its tags: %w", err)
	}
	for _, k := range []string{TagInboxOf, TagSubscription} {
		if v := tags[k]; v != "" && v != subscription {
			return fmt.Errorf("it is the inbox of the subscription %s (tag %s): two consumers sharing an inbox would skip each other's events; give this subscription an inbox of its own", v, k)
		}
	}
	claim := map[string]string{TagInboxOf: subscription}
	added, err := c.enableInboxTTL(ctx, in.TableName)
	if err != nil {
		return err
	}
	if added {
		claim[TagInboxTTL] = subscription
	}
	_, err = c.DynamoDB.TagResource(ctx, &dynamodb.TagResourceInput{
		ResourceArn: aws.String(in.TableARN), Tags: awsops.TagList(claim, func(k, v *string) types.Tag { return types.Tag{Key: k, Value: v} }),
	})
	if err != nil {
		return fmt.Errorf("tagging it %s=%s: %w", TagInboxOf, subscription, err)
	}
	return nil
}

func (c *Provisioner) createInbox(ctx context.Context, name string, in InboxSpec, tags map[string]string) (*types.TableDescription, error) {
	input := consumer.TableInput(name)
	input.DeletionProtectionEnabled = in.DeletionProtection
	input.Tags = awsops.TagList(tags, func(k, v *string) types.Tag { return types.Tag{Key: k, Value: v} })
	if in.KMSKeyARN != "" {
		input.SSESpecification = awsops.TableSSE(in.KMSKeyARN)
	}
	if _, err := c.DynamoDB.CreateTable(ctx, input); err != nil {
		return nil, err
	}
	return c.waitTableActive(ctx, name)
}

// checkInboxKey checks that the table has the kit's key: the string
// partition key eventId alone.
func checkInboxKey(desc *types.TableDescription) error {
	ks := desc.KeySchema
	if len(ks) != 1 || aws.ToString(ks[0].AttributeName) != consumer.AttrEventID || ks[0].KeyType != types.KeyTypeHash {
		return fmt.Errorf("its key is not the inbox's (the string partition key %s alone): delete the table, or choose another subscription name", consumer.AttrEventID)
	}
	for _, a := range desc.AttributeDefinitions {
		if aws.ToString(a.AttributeName) == consumer.AttrEventID && a.AttributeType != types.ScalarAttributeTypeS {
			return fmt.Errorf("its key %s is of type %s, not a string (S): delete the table, or choose another subscription name", consumer.AttrEventID, a.AttributeType)
		}
	}
	return nil
}

// ensureInboxSettings brings the TTL, deletion protection, key and
// point-in-time recovery of the table to in.
func (c *Provisioner) ensureInboxSettings(ctx context.Context, name string, in InboxSpec, desc *types.TableDescription) error {
	if _, err := c.enableInboxTTL(ctx, name); err != nil {
		return err
	}
	if want := *in.DeletionProtection; aws.ToBool(desc.DeletionProtectionEnabled) != want {
		if err := c.updateTable(ctx, &dynamodb.UpdateTableInput{TableName: aws.String(name), DeletionProtectionEnabled: aws.Bool(want)}); err != nil {
			return fmt.Errorf("setting its deletion protection to %t: %w", want, err)
		}
	}
	if want := in.KMSKeyARN; awsops.TableKMSKey(desc) != want {
		if err := c.updateTable(ctx, &dynamodb.UpdateTableInput{TableName: aws.String(name), SSESpecification: awsops.TableSSE(want)}); err != nil {
			return fmt.Errorf("setting its encryption key to %q: %w", want, err)
		}
	}
	have, err := awsops.PointInTimeRecovery(ctx, c.DynamoDB, name)
	if err != nil {
		return fmt.Errorf("reading its point-in-time recovery: %w", err)
	}
	if want := *in.PointInTimeRecovery; have != want {
		if _, err := c.DynamoDB.UpdateContinuousBackups(ctx, &dynamodb.UpdateContinuousBackupsInput{
			TableName:                        aws.String(name),
			PointInTimeRecoverySpecification: &types.PointInTimeRecoverySpecification{PointInTimeRecoveryEnabled: aws.Bool(want)},
		}); err != nil {
			return fmt.Errorf("setting its point-in-time recovery to %t: %w", want, err)
		}
	}
	return nil
}

// enableInboxTTL enables TTL on the kit's attribute, and reports whether
// it did. A table has one TTL attribute: TTL on another one is refused,
// since the kit's entries would never expire.
func (c *Provisioner) enableInboxTTL(ctx context.Context, name string) (bool, error) {
	attr, err := awsops.TTLAttribute(ctx, c.DynamoDB, name)
	switch {
	case err != nil:
		return false, fmt.Errorf("reading its TTL: %w", err)
	case attr == InboxTTLAttribute:
		return false, nil
	case attr != "":
		return false, fmt.Errorf("its TTL is enabled on %s, but the inbox's entries expire on %s: disable TTL on the table and apply again", attr, InboxTTLAttribute)
	}
	_, err = c.DynamoDB.UpdateTimeToLive(ctx, &dynamodb.UpdateTimeToLiveInput{
		TableName:               aws.String(name),
		TimeToLiveSpecification: &types.TimeToLiveSpecification{AttributeName: aws.String(InboxTTLAttribute), Enabled: aws.Bool(true)},
	})
	if err != nil {
		return false, fmt.Errorf("enabling TTL on %s: %w", InboxTTLAttribute, err)
	}
	return true, nil
}

// observeInbox records the table's settings in in; it clears in when the
// table does not exist.
func (c *Provisioner) observeInbox(ctx context.Context, in *InboxState) error {
	desc, err := c.describeTable(ctx, in.TableName)
	if err != nil {
		return fmt.Errorf("reading inbox table (%s): %w", in.TableName, err)
	}
	if desc == nil {
		*in = InboxState{}
		return nil
	}
	in.TableARN = aws.ToString(desc.TableArn)
	in.DeletionProtection = aws.ToBool(desc.DeletionProtectionEnabled)
	in.KMSKeyARN = awsops.TableKMSKey(desc)
	if in.TTLAttribute, err = awsops.TTLAttribute(ctx, c.DynamoDB, in.TableName); err != nil {
		return fmt.Errorf("reading the TTL of inbox table (%s): %w", in.TableName, err)
	}
	if in.PointInTimeRecovery, err = awsops.PointInTimeRecovery(ctx, c.DynamoDB, in.TableName); err != nil {
		return fmt.Errorf("reading the point-in-time recovery of inbox table (%s): %w", in.TableName, err)
	}
	return nil
}

// readInbox records the inbox table's settings and their drift from the
// Spec.
func (c *Provisioner) readInbox(ctx context.Context, p *pass) error {
	st := p.st
	if st.Inbox.TableName != "" {
		if err := c.observeInbox(ctx, &st.Inbox); err != nil {
			return err
		}
	}
	if p.s.Inbox == nil {
		return nil
	}
	if st.Inbox.TableName == "" {
		p.d.AddMissing(ComponentInbox)
		return nil
	}
	if in := p.s.Inbox.withDefaults(); in.Existing {
		// An adopted table's own settings are its owner's: only the TTL the
		// kit needs is the subscription's.
		var f awsops.Fields
		f.Add(st.Inbox.TTLAttribute != InboxTTLAttribute, InboxFieldTTL)
		p.d.AddChanged(ComponentInbox, f...)
	} else {
		p.d.AddChanged(ComponentInbox, inboxDiff(in, st.Inbox)...)
	}
	return nil
}

// inboxDiff returns the fields of the inbox that differ from in.
func inboxDiff(in InboxSpec, have InboxState) []string {
	var f awsops.Fields
	f.Add(have.DeletionProtection != *in.DeletionProtection, InboxFieldDeletionProtection)
	f.Add(have.PointInTimeRecovery != *in.PointInTimeRecovery, InboxFieldPointInTimeRecovery)
	f.Add(have.KMSKeyARN != in.KMSKeyARN, InboxFieldKMSKeyARN)
	f.Add(have.TTLAttribute != InboxTTLAttribute, InboxFieldTTL)
	return f
}

// InboxProtectedError is returned when the inbox table would be deleted
// while its deletion protection is on.
type InboxProtectedError struct {
	Subscription string
	Table        string
}

func (e *InboxProtectedError) Error() string {
	return fmt.Sprintf("deleting the inbox table %s of outbox subscription (%s): its deletion protection is on. "+
		"The table records which events the consumer has applied; without it, every event delivered again would be applied again. "+
		"To delete it, set inbox.deletion_protection = false and apply it first", e.Table, e.Subscription)
}

// removeInbox deletes the inbox table, unless its deletion protection is
// on: then it fails before anything else of the subscription is deleted
// (the inbox is the last component, so the first removed).
func (c *Provisioner) removeInbox(ctx context.Context, st *State) error {
	name := st.Inbox.TableName
	if name == "" {
		return nil
	}
	desc, err := c.describeTable(ctx, name)
	if err != nil {
		return fmt.Errorf("reading inbox table (%s): %w", name, err)
	}
	if desc != nil && st.Inbox.Adopted {
		if err := c.releaseInbox(ctx, st.Name, st.Inbox); err != nil {
			return fmt.Errorf("reverting changes to inbox table (%s): %w", name, err)
		}
		st.Inbox = InboxState{}
		return nil
	}
	if desc != nil && aws.ToBool(desc.DeletionProtectionEnabled) {
		return &InboxProtectedError{Subscription: st.Name, Table: name}
	}
	if desc != nil {
		_, err := c.DynamoDB.DeleteTable(ctx, &dynamodb.DeleteTableInput{TableName: aws.String(name)})
		if err := awsops.IgnoreNotFound(err); err != nil {
			return fmt.Errorf("deleting inbox table (%s): %w", name, err)
		}
		err = c.waiter().For(ctx, "inbox table "+name+" to be deleted", func(ctx context.Context) (bool, error) {
			d, err := c.describeTable(ctx, name)
			return d == nil, err
		})
		if err != nil {
			return fmt.Errorf("deleting inbox table (%s): %w", name, err)
		}
	}
	st.Inbox = InboxState{}
	return nil
}

// releaseInbox reverts what adoptInbox did: the TTL it enabled, and its
// tags. The table stays.
func (c *Provisioner) releaseInbox(ctx context.Context, subscription string, in InboxState) error {
	tags, err := awsops.TableTags(ctx, c.DynamoDB, in.TableARN)
	if err != nil {
		return fmt.Errorf("reading its tags: %w", err)
	}
	if tags[TagInboxTTL] == subscription {
		_, err := c.DynamoDB.UpdateTimeToLive(ctx, &dynamodb.UpdateTimeToLiveInput{
			TableName:               aws.String(in.TableName),
			TimeToLiveSpecification: &types.TimeToLiveSpecification{AttributeName: aws.String(InboxTTLAttribute), Enabled: aws.Bool(false)},
		})
		if err != nil && !strings.Contains(err.Error(), "TimeToLive is already disabled") {
			return fmt.Errorf("disabling TTL on %s: %w", InboxTTLAttribute, err)
		}
	}
	var remove []string
	for _, k := range []string{TagInboxOf, TagInboxTTL} {
		if tags[k] == subscription {
			remove = append(remove, k)
		}
	}
	if len(remove) == 0 {
		return nil
	}
	_, err = c.DynamoDB.UntagResource(ctx, &dynamodb.UntagResourceInput{ResourceArn: aws.String(in.TableARN), TagKeys: remove})
	return err
}

// lookupInbox records the inbox table of the subscription, for import: the
// table <name>-inbox tagged with the subscription's name.
func (c *Provisioner) lookupInbox(ctx context.Context, p *pass) error {
	name := InboxTableName(p.s.Name)
	desc, err := c.describeTable(ctx, name)
	if err != nil {
		return fmt.Errorf("reading inbox table (%s): %w", name, err)
	}
	if desc == nil {
		return nil
	}
	tags, err := awsops.TableTags(ctx, c.DynamoDB, aws.ToString(desc.TableArn))
	if err != nil {
		return fmt.Errorf("reading the tags of inbox table (%s): %w", name, err)
	}
	if tags[TagSubscription] != p.s.Name {
		return nil
	}
	p.st.Inbox.TableName = name
	if err := c.observeInbox(ctx, &p.st.Inbox); err != nil {
		return err
	}
	in := p.st.Inbox
	p.s.Inbox = &InboxSpec{DeletionProtection: &in.DeletionProtection, PointInTimeRecovery: &in.PointInTimeRecovery, KMSKeyARN: in.KMSKeyARN}
	return nil
}

// describeTable returns the table, or nil when it does not exist.
func (c *Provisioner) describeTable(ctx context.Context, name string) (*types.TableDescription, error) {
	out, err := c.DynamoDB.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(name)})
	return awsops.Found(out, err, func(o *dynamodb.DescribeTableOutput) *types.TableDescription { return o.Table })
}

// updateTable updates the table and waits until it is ACTIVE again.
func (c *Provisioner) updateTable(ctx context.Context, in *dynamodb.UpdateTableInput) error {
	return awsops.UpdateTable(ctx, c.waiter(), c.DynamoDB, in)
}

// waitTableActive waits until the table is ACTIVE.
func (c *Provisioner) waitTableActive(ctx context.Context, name string) (*types.TableDescription, error) {
	return awsops.WaitTableActive(ctx, c.waiter(), c.DynamoDB, name)
}

// The actions of the consumer policy.
var (
	// consumerQueueActions are what an SQS event source mapping (or a
	// consumer polling the queue itself) calls on the queue.
	consumerQueueActions = []string{"sqs:ReceiveMessage", "sqs:DeleteMessage", "sqs:ChangeMessageVisibility", "sqs:GetQueueAttributes"}
	// consumerInboxActions are what the kit calls on the inbox table: the
	// conditional put that starts an attempt, and the updates that complete
	// (inside TransactWriteItems, whose Update needs dynamodb:UpdateItem)
	// or release it.
	consumerInboxActions = []string{"dynamodb:PutItem", "dynamodb:UpdateItem"}
)

// ConsumerPolicy is the least-privilege IAM policy of a consumer that
// receives the subscription's queue and applies each event once with the
// kit's inbox: the queue's actions on the queue, the kit's on the inbox
// table, and the KMS keys of both, when they are customer managed. The
// handler's own effects (its tables) need statements of their own.
func ConsumerPolicy(queueARN, queueKMSKey, inboxARN, inboxKMSKey string) PolicyDocument {
	doc := PolicyDocument{Version: queuePolicyVersion, Statement: []Statement{
		{Sid: "ReceiveSubscriptionQueue", Effect: "Allow", Action: consumerQueueActions, Resource: []string{queueARN}},
		{Sid: "UseInbox", Effect: "Allow", Action: consumerInboxActions, Resource: []string{inboxARN}},
	}}
	if queueKMSKey != "" {
		// Receiving from an SSE-KMS queue decrypts the data key.
		doc.Statement = append(doc.Statement, awsops.KMSKeyStatement("DecryptQueueMessages", []string{"kms:Decrypt"}, queueKMSKey, queueARN))
	}
	if inboxKMSKey != "" {
		doc.Statement = append(doc.Statement, awsops.KMSKeyStatement("UseInboxKey", []string{"kms:Decrypt", "kms:GenerateDataKey"}, inboxKMSKey, inboxARN))
	}
	return doc
}

// tableNamePattern is DynamoDB's rule for table names.
var tableNamePattern = regexp.MustCompile(`^[A-Za-z0-9_.-]{3,255}$`)

// validateInbox checks the inbox's settings.
func (s Spec) validateInbox() error {
	in := s.Inbox
	switch {
	case in == nil:
		return nil
	case in.Existing && in.Name == "":
		return invalid("Inbox.Name", "set the name of the table to adopt, or remove existing to have the subscription create one", "is empty with Existing")
	case in.Existing && !tableNamePattern.MatchString(in.Name):
		return invalid("Inbox.Name", "use 3 to 255 letters, digits, underscores, hyphens and dots, as DynamoDB table names", "is %q", in.Name)
	case !in.Existing && in.Name != "":
		return invalid("Inbox.Name", "remove it: a dedicated inbox is called <name>-inbox; or set existing = true to adopt that table", "is set without Existing")
	case in.Existing && in.KMSKeyARN != "":
		return invalid("Inbox.KMSKeyARN", "remove it: an adopted table keeps its own encryption", "is set with Existing")
	case in.KMSKeyARN != "" && !kmsKeyARNPattern.MatchString(in.KMSKeyARN):
		return invalid("Inbox.KMSKeyARN", "use the ARN of a KMS key (arn:aws:kms:<region>:<account>:key/<id>), such as aws_kms_key.<name>.arn", "is %q", in.KMSKeyARN)
	}
	return nil
}
