package consumer

import (
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// The inbox item's attribute names (docs/guides/inbox-contract.md).
const (
	// AttrEventID is the table's partition key, its only key: the event id
	// (metadata.eventId of the published event).
	AttrEventID = "eventId"
	// AttrStatus is StatusInProgress or StatusCompleted.
	AttrStatus = "status"
	// AttrPayloadHash is PayloadHash of the event's data.
	AttrPayloadHash = "payloadHash"
	// AttrLeaseToken identifies the attempt that holds the lease; it is
	// removed on completion and on release.
	AttrLeaseToken = "leaseToken"
	// AttrLeaseExpiresAt is when the lease ends, in Unix milliseconds.
	AttrLeaseExpiresAt = "leaseExpiresAt"
	// AttrExpiresAt is the table's TTL attribute, in Unix seconds.
	AttrExpiresAt = "expiresAt"
	// AttrCompletedAt is when the event completed, in Unix milliseconds.
	AttrCompletedAt = "completedAt"
	// AttrInboxVersion is the version of the inbox contract, InboxVersion.
	AttrInboxVersion = "inboxVersion"
)

// The values of AttrStatus.
const (
	StatusInProgress = "IN_PROGRESS"
	StatusCompleted  = "COMPLETED"
)

// InboxVersion is the version of the inbox contract written in
// AttrInboxVersion.
const InboxVersion = 1

// AcquireCondition is the condition of the put that starts an attempt: the
// event is new, or an attempt that did not complete let its lease expire,
// with the same payload.
const AcquireCondition = "attribute_not_exists(#id) OR (#status = :inProgress AND #lease < :now AND #hash = :hash)"

// CompleteCondition is the condition of the update that completes an
// attempt: it still holds the lease.
const CompleteCondition = "#token = :token AND #hash = :hash"

// completeUpdate marks the entry completed and removes the lease.
const completeUpdate = "SET #status = :completed, #completedAt = :completedAt, #expiresAt = :expiresAt REMOVE #token, #lease"

// releaseUpdate ends the lease at once, keeping the payload hash, so that
// the next delivery need not wait for the lease.
const releaseUpdate = "SET #lease = :zero REMOVE #token"

func str(s string) types.AttributeValue { return &types.AttributeValueMemberS{Value: s} }

func num(n int64) types.AttributeValue {
	return &types.AttributeValueMemberN{Value: strconv.FormatInt(n, 10)}
}

// attempt is one attempt at one event.
type attempt struct {
	eventID, hash, token string
	leaseExpires         time.Time
}

func (a attempt) key() map[string]types.AttributeValue {
	return map[string]types.AttributeValue{AttrEventID: str(a.eventID)}
}

// item is the IN_PROGRESS entry of the attempt. Its TTL lets an abandoned
// entry go once the retention has passed after the lease.
func (a attempt) item(retention time.Duration) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{
		AttrEventID:        str(a.eventID),
		AttrStatus:         str(StatusInProgress),
		AttrPayloadHash:    str(a.hash),
		AttrLeaseToken:     str(a.token),
		AttrLeaseExpiresAt: num(a.leaseExpires.UnixMilli()),
		AttrExpiresAt:      num(a.leaseExpires.Add(retention).Unix()),
		AttrInboxVersion:   num(InboxVersion),
	}
}

// entry is what the kit reads of a stored inbox item.
type entry struct {
	status, hash, token string
	leaseExpiresAt      int64
}

func readEntry(item map[string]types.AttributeValue) entry {
	var e entry
	if v, ok := item[AttrStatus].(*types.AttributeValueMemberS); ok {
		e.status = v.Value
	}
	if v, ok := item[AttrPayloadHash].(*types.AttributeValueMemberS); ok {
		e.hash = v.Value
	}
	if v, ok := item[AttrLeaseToken].(*types.AttributeValueMemberS); ok {
		e.token = v.Value
	}
	if v, ok := item[AttrLeaseExpiresAt].(*types.AttributeValueMemberN); ok {
		e.leaseExpiresAt, _ = strconv.ParseInt(v.Value, 10, 64)
	}
	return e
}

// TableInput is the definition of an inbox table: the string partition key
// AttrEventID alone, on demand. Enable its TTL on AttrExpiresAt
// (UpdateTimeToLive) so that completed entries go after the retention.
func TableInput(name string) *dynamodb.CreateTableInput {
	return &dynamodb.CreateTableInput{
		TableName:            aws.String(name),
		BillingMode:          types.BillingModePayPerRequest,
		AttributeDefinitions: []types.AttributeDefinition{{AttributeName: aws.String(AttrEventID), AttributeType: types.ScalarAttributeTypeS}},
		KeySchema:            []types.KeySchemaElement{{AttributeName: aws.String(AttrEventID), KeyType: types.KeyTypeHash}},
	}
}
