package subscription

import (
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/outboxkit/terraform-provider-outbox/consumer"
	"github.com/outboxkit/terraform-provider-outbox/internal/awsops"
	"github.com/outboxkit/terraform-provider-outbox/internal/component/componenttest"
	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/localawstest"
)

// TestSubscriptionLocalInbox: the inbox table has the kit's shape, its
// settings drift and are repaired, import finds it, and Delete refuses to
// delete it while it is protected, before deleting anything else.
func TestSubscriptionLocalInbox(t *testing.T) {
	t.Parallel()
	stack, c, ctx := startStack(t)
	localawstest.RequireServices(t, stack, "dynamodb")
	before := componenttest.Inventory(t, ctx, stack)

	spec := Spec{Name: "payments", Sources: []string{"com.example.orders"}, Inbox: &InboxSpec{}, Tags: map[string]string{"team": "payments"}}
	st, err := c.Create(ctx, spec)
	if err != nil {
		t.Fatalf("Create: %v", err)
	}
	want := InboxState{TableName: "payments-inbox", TableARN: st.Inbox.TableARN, TTLAttribute: consumer.AttrExpiresAt, DeletionProtection: true, PointInTimeRecovery: true}
	if st.Inbox != want || !strings.HasSuffix(st.Inbox.TableARN, ":table/payments-inbox") {
		t.Errorf("inbox after Create: %+v, want %+v", st.Inbox, want)
	}
	checkInboxShape(t, c, st.Inbox.TableName)

	// PITR and TTL turned off by hand: drift, with the values observed.
	if _, err := c.DynamoDB.UpdateContinuousBackups(ctx, &dynamodb.UpdateContinuousBackupsInput{
		TableName: aws.String("payments-inbox"), PointInTimeRecoverySpecification: &types.PointInTimeRecoverySpecification{PointInTimeRecoveryEnabled: aws.Bool(false)},
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.DynamoDB.UpdateTimeToLive(ctx, &dynamodb.UpdateTimeToLiveInput{
		TableName: aws.String("payments-inbox"), TimeToLiveSpecification: &types.TimeToLiveSpecification{AttributeName: aws.String(consumer.AttrExpiresAt), Enabled: aws.Bool(false)},
	}); err != nil {
		t.Fatal(err)
	}
	observed, d := must.Read(t, ctx, c, spec, st)
	if observed.Inbox.PointInTimeRecovery || observed.Inbox.TTLAttribute != "" ||
		len(d.Changed) != 1 || d.Changed[0].Component != ComponentInbox ||
		!slices.Equal(d.Changed[0].Fields, []string{InboxFieldPointInTimeRecovery, InboxFieldTTL}) {
		t.Errorf("Read after PITR and TTL were turned off: inbox %+v, drift %s", observed.Inbox, d)
	}
	if st, err = c.Update(ctx, spec, observed); err != nil {
		t.Fatalf("Update repairing the inbox: %v", err)
	}
	if _, d := must.Read(t, ctx, c, spec, st); !d.None() || st.Inbox != want {
		t.Errorf("after the repair: inbox %+v, drift %s", st.Inbox, d)
	}

	// Import finds the inbox and its settings.
	found, fst, err := c.Lookup(ctx, "payments")
	if err != nil {
		t.Fatalf("Lookup: %v", err)
	}
	if found.Inbox == nil || !*found.Inbox.DeletionProtection || !*found.Inbox.PointInTimeRecovery || fst.Inbox != want {
		t.Errorf("Lookup: inbox %+v, state %+v", found.Inbox, fst.Inbox)
	}

	// Protected: Delete refuses before deleting anything.
	left, err := c.Delete(ctx, st)
	var protected *InboxProtectedError
	if !errors.As(err, &protected) || left != st {
		t.Fatalf("Delete of a protected inbox: %v, left %+v", err, left)
	}
	if attrs, err := c.queue(ctx, st.QueueURL); err != nil || attrs == nil {
		t.Errorf("the queue after a refused Delete: %v, %v", attrs, err)
	}
	unprotected := spec
	unprotected.Inbox = &InboxSpec{DeletionProtection: aws.Bool(false)}
	if st, err = c.Update(ctx, unprotected, st); err != nil || st.Inbox.DeletionProtection {
		t.Fatalf("Update turning the protection off: %v (%+v)", err, st.Inbox)
	}
	if _, err := c.Delete(ctx, st); err != nil {
		t.Fatalf("Delete: %v", err)
	}
	componenttest.CheckInventory(t, ctx, stack, before, "Delete of a subscription with an inbox")
}

// checkInboxShape checks the table's key, billing and TTL.
func checkInboxShape(t *testing.T, c *Provisioner, table string) {
	t.Helper()
	ctx := t.Context()
	desc, err := c.describeTable(ctx, table)
	if err != nil || desc == nil {
		t.Fatalf("DescribeTable(%s): %v", table, err)
	}
	if err := checkInboxKey(desc); err != nil {
		t.Error(err)
	}
	if desc.BillingModeSummary == nil || desc.BillingModeSummary.BillingMode != types.BillingModePayPerRequest {
		t.Errorf("billing mode %+v, want PAY_PER_REQUEST", desc.BillingModeSummary)
	}
	tags, err := awsops.TableTags(ctx, c.DynamoDB, aws.ToString(desc.TableArn))
	if err != nil || tags["team"] != "payments" || tags[TagSubscription] != "payments" {
		t.Errorf("tags %v (%v)", tags, err)
	}
}

func TestConsumerPolicy(t *testing.T) {
	t.Parallel()
	const queue = "arn:aws:sqs:eu-west-1:123456789012:payments"
	const inbox = "arn:aws:dynamodb:eu-west-1:123456789012:table/payments-inbox"
	const inboxKey = "arn:aws:kms:eu-west-1:123456789012:key/1111"
	for _, tc := range []struct {
		name, queueKey, inboxKey string
		want                     []Statement
	}{
		{name: "no keys"},
		{name: "queue key id", queueKey: "2222", want: []Statement{{
			Sid: "DecryptQueueMessages", Effect: "Allow", Action: []string{"kms:Decrypt"}, Resource: []string{"arn:aws:kms:eu-west-1:123456789012:key/2222"},
		}}},
		{name: "queue key alias", queueKey: "alias/orders", want: []Statement{{
			Sid: "DecryptQueueMessages", Effect: "Allow", Action: []string{"kms:Decrypt"}, Resource: []string{"arn:aws:kms:eu-west-1:123456789012:key/*"},
			Condition: map[string]map[string]string{"ForAnyValue:StringEquals": {"kms:ResourceAliases": "alias/orders"}},
		}}},
		{name: "inbox key", inboxKey: inboxKey, want: []Statement{{
			Sid: "UseInboxKey", Effect: "Allow", Action: []string{"kms:Decrypt", "kms:GenerateDataKey"}, Resource: []string{inboxKey},
		}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			doc := ConsumerPolicy(queue, tc.queueKey, inbox, tc.inboxKey)
			base := []Statement{
				{Sid: "ReceiveSubscriptionQueue", Effect: "Allow", Action: []string{"sqs:ReceiveMessage", "sqs:DeleteMessage", "sqs:ChangeMessageVisibility", "sqs:GetQueueAttributes"}, Resource: []string{queue}},
				{Sid: "UseInbox", Effect: "Allow", Action: []string{"dynamodb:PutItem", "dynamodb:UpdateItem"}, Resource: []string{inbox}},
			}
			got, _ := json.Marshal(doc.Statement)
			wantJSON, _ := json.Marshal(append(base, tc.want...))
			if string(got) != string(wantJSON) {
				t.Errorf("statements:\n%s\nwant\n%s", got, wantJSON)
			}
		})
	}
}

// TestSubscriptionLocalInboxAdopted: an existing table is adopted (TTL
// enabled, claimed), refused to a second subscription, and on Delete
// released, not deleted.
func TestSubscriptionLocalInboxAdopted(t *testing.T) {
	t.Parallel()
	stack, c, ctx := startStack(t)
	localawstest.RequireServices(t, stack, "dynamodb")
	if _, err := c.DynamoDB.CreateTable(ctx, consumer.TableInput("shared-inbox")); err != nil {
		t.Fatal(err)
	}
	if _, err := c.waitTableActive(ctx, "shared-inbox"); err != nil {
		t.Fatal(err)
	}
	before := componenttest.Inventory(t, ctx, stack)

	spec := Spec{Name: "ledger", Sources: []string{"com.example.orders"}, Inbox: &InboxSpec{Existing: true, Name: "shared-inbox"}}
	st, err := c.Create(ctx, spec)
	if err != nil {
		t.Fatalf("Create: %v", err)
	}
	if !st.Inbox.Adopted || st.Inbox.TableName != "shared-inbox" || st.Inbox.TTLAttribute != consumer.AttrExpiresAt {
		t.Errorf("inbox after Create: %+v", st.Inbox)
	}
	tags, err := awsops.TableTags(ctx, c.DynamoDB, st.Inbox.TableARN)
	if err != nil || tags[TagInboxOf] != "ledger" || tags[TagInboxTTL] != "ledger" || tags[TagSubscription] != "" {
		t.Errorf("tags of the adopted table: %v (%v)", tags, err)
	}
	if _, d := must.Read(t, ctx, c, spec, st); !d.None() {
		t.Errorf("drift right after adopting: %s", d)
	}

	other := Spec{Name: "audit", Sources: []string{"com.example.orders"}, Inbox: &InboxSpec{Existing: true, Name: "shared-inbox"}}
	if _, err := c.Create(ctx, other); err == nil || !strings.Contains(err.Error(), "inbox of the subscription ledger") {
		t.Errorf("a second subscription adopting the inbox: %v", err)
	}

	if _, err := c.Delete(ctx, st); err != nil {
		t.Fatalf("Delete: %v", err)
	}
	componenttest.CheckInventory(t, ctx, stack, before, "Delete of a subscription with an adopted inbox")
	ttl, err := awsops.TTLAttribute(ctx, c.DynamoDB, "shared-inbox")
	tags, terr := awsops.TableTags(ctx, c.DynamoDB, st.Inbox.TableARN)
	if err != nil || terr != nil || ttl != "" || len(tags) != 0 {
		t.Errorf("the released table: TTL %q (%v), tags %v (%v); want TTL off and no tags", ttl, err, tags, terr)
	}
}

func TestInboxValidation(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in    InboxSpec
		field string
	}{
		{InboxSpec{Existing: true}, "Inbox.Name"},
		{InboxSpec{Name: "x-inbox"}, "Inbox.Name"},
		{InboxSpec{Existing: true, Name: "a b"}, "Inbox.Name"},
		{InboxSpec{Existing: true, Name: "ok-inbox", KMSKeyARN: "arn:aws:kms:us-east-1:123456789012:key/1"}, "Inbox.KMSKeyARN"},
		{InboxSpec{KMSKeyARN: "alias/x"}, "Inbox.KMSKeyARN"},
	} {
		err := Spec{Name: "s", Sources: []string{"x"}, Inbox: &tc.in}.Validate()
		var ve *ValidationError
		if !errors.As(err, &ve) || ve.Field != tc.field {
			t.Errorf("%+v: %v, want an error on %s", tc.in, err, tc.field)
		}
	}
	if err := (Spec{Name: "s", Sources: []string{"x"}, Inbox: &InboxSpec{Existing: true, Name: "ok-inbox"}}).Validate(); err != nil {
		t.Errorf("an adopted inbox: %v", err)
	}
}
