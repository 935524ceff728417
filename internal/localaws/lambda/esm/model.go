package esm

import (
	"context"
	"encoding/json"
	"slices"
	"time"

	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/awsapi"
	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/sqs"
)

// StreamRecord is one DynamoDB stream record as the stream holds it. Keys,
// NewImage and OldImage are attribute maps in DynamoDB's JSON wire shape
// ({"pk":{"S":"a"}}); nil when absent.
type StreamRecord struct {
	EventID        string
	EventName      string // INSERT, MODIFY, REMOVE
	EventVersion   string // "1.1" when empty
	SequenceNumber string
	// ApproximateCreationDateTime is when the change was committed.
	ApproximateCreationDateTime time.Time
	Keys                        json.RawMessage
	NewImage                    json.RawMessage
	OldImage                    json.RawMessage
	SizeBytes                   int64
	StreamViewType              string
	// UserIdentity is set on TTL deletes
	// ({"type":"Service","principalId":"dynamodb.amazonaws.com"}).
	UserIdentity json.RawMessage
	// PartitionKey identifies the item's partition key for ordering with
	// ParallelizationFactor > 1; Keys is used when empty.
	PartitionKey string
}

// Shard is one shard of a stream. A child shard is read once its parent is
// closed and fully processed.
type Shard struct {
	ID       string
	ParentID string
	// Closed is true once the shard takes no more records.
	Closed bool
}

// Streams is the DynamoDB Streams data plane the pollers read.
type Streams interface {
	// StreamExists reports whether a stream ARN is a current stream.
	StreamExists(streamArn string) bool
	// Shards lists the shards of a stream, parents before children.
	Shards(streamArn string) ([]Shard, error)
	// Records returns up to limit records of a shard with sequence numbers
	// greater than after ("" reads from the trim horizon). trimmed is true
	// when records after `after` were trimmed (retention passed); the
	// records returned then start at the trim horizon.
	Records(streamArn, shardID, after string, limit int) (recs []StreamRecord, trimmed bool, err error)
	// LatestSequenceNumber returns the sequence number of the newest record
	// of a shard ("" when it has none): LATEST starts after it.
	LatestSequenceNumber(streamArn, shardID string) (string, error)
}

// Functions is the Lambda function registry and its synchronous invoke.
type Functions interface {
	// InvokeSync invokes a function (name or ARN) synchronously.
	// functionError is "Unhandled" or "Handled" for a function error, empty
	// on success; err is an infrastructure problem (missing function,
	// throttling).
	InvokeSync(ctx context.Context, function string, payload []byte) (out []byte, functionError string, err error)
	// FunctionInfo returns a function's ARN, execution role and state.
	FunctionInfo(name string) (arn, roleArn, state string, ok bool)
}

// QueueMessages is the SQS data plane a queue mapping's poller uses: it
// receives with the queue's visibility timeout, deletes what the function
// processed and makes visible again what it could not.
type QueueMessages interface {
	// QueueInfo reports whether the queue exists, is FIFO, and its
	// visibility timeout in seconds.
	QueueInfo(queueArn string) (fifo bool, visibilityTimeout int, ok bool)
	// Receive receives up to maxMessages (1 to 10) messages, waiting up to
	// wait for the first.
	Receive(ctx context.Context, queueArn string, maxMessages int, wait time.Duration) ([]sqs.Received, error)
	DeleteReceived(queueArn, receiptHandle string) error
	ChangeReceivedVisibility(queueArn, receiptHandle string, timeout int) error
}

// Queues delivers on-failure records to SQS.
type Queues interface {
	Deliver(queueArn, body string, attributes map[string]string) (messageID string, err error)
	// AuthorizeSender checks what SQS asks of a producer beyond
	// sqs:SendMessage (the use of an SSE-KMS queue's key).
	AuthorizeSender(p awsapi.Principal, queueArn string) error
}

// Matcher is a compiled filter pattern.
type Matcher interface {
	Matches(eventJSON []byte) bool
}

// Defaults.
const (
	// DefaultPollInterval is Lambda's cadence: about 4 polls a second per
	// shard.
	DefaultPollInterval = 250 * time.Millisecond
	// DefaultTransition is how long the transient states (Creating,
	// Enabling, Disabling, Updating, Deleting) last.
	DefaultTransition = 200 * time.Millisecond
	// maxPayloadBytes is Lambda's synchronous invocation payload limit.
	maxPayloadBytes = 6 << 20
	// maxGetRecords is DynamoDB Streams' GetRecords limit.
	maxGetRecords = 1000
	// maxFilters is the default quota of filters per mapping.
	maxFilters = 5
)

// Mapping states.
const (
	StateCreating  = "Creating"
	StateEnabling  = "Enabling"
	StateEnabled   = "Enabled"
	StateDisabling = "Disabling"
	StateDisabled  = "Disabled"
	StateUpdating  = "Updating"
	StateDeleting  = "Deleting"
)

// Settings are a mapping's stored settings.
type Settings struct {
	EventSourceArn                 string
	FunctionArn                    string
	StartingPosition               string
	StartingPositionTimestamp      *time.Time
	BatchSize                      int
	MaximumBatchingWindowInSeconds int
	ParallelizationFactor          int
	MaximumRetryAttempts           int
	MaximumRecordAgeInSeconds      int
	BisectBatchOnFunctionError     bool
	OnFailureDestination           string
	Filters                        []string
	FunctionResponseTypes          []string
	TumblingWindowInSeconds        int
	// MaximumConcurrency is ScalingConfig.MaximumConcurrency of a queue
	// mapping (0 when unset).
	MaximumConcurrency int
	// Metrics is MetricsConfig.Metrics (EventCount).
	Metrics []string
	// kind is the source kind of EventSourceArn.
	kind sourceKind
}

func (s Settings) reportBatchItemFailures() bool {
	return slices.Contains(s.FunctionResponseTypes, "ReportBatchItemFailures")
}

// --- wire shapes (restJson1, see the lambda client's schemas) ---

type wireFilter struct {
	Pattern *string `json:"Pattern,omitempty"`
}

type wireFilterCriteria struct {
	Filters []wireFilter `json:"Filters,omitempty"`
}

type wireOnFailure struct {
	Destination *string `json:"Destination,omitempty"`
}

type wireDestinationConfig struct {
	OnFailure *wireOnFailure `json:"OnFailure,omitempty"`
	OnSuccess *wireOnFailure `json:"OnSuccess,omitempty"`
}

type wireScalingConfig struct {
	MaximumConcurrency *int64 `json:"MaximumConcurrency,omitempty"`
}

type wireMetricsConfig struct {
	Metrics []string `json:"Metrics"`
}

// mappingInput is the body of Create and Update.
type mappingInput struct {
	EventSourceArn                 *string                `json:"EventSourceArn"`
	FunctionName                   *string                `json:"FunctionName"`
	Enabled                        *bool                  `json:"Enabled"`
	BatchSize                      *int64                 `json:"BatchSize"`
	FilterCriteria                 *wireFilterCriteria    `json:"FilterCriteria"`
	MaximumBatchingWindowInSeconds *int64                 `json:"MaximumBatchingWindowInSeconds"`
	ParallelizationFactor          *int64                 `json:"ParallelizationFactor"`
	StartingPosition               *string                `json:"StartingPosition"`
	StartingPositionTimestamp      *float64               `json:"StartingPositionTimestamp"`
	DestinationConfig              *wireDestinationConfig `json:"DestinationConfig"`
	MaximumRecordAgeInSeconds      *int64                 `json:"MaximumRecordAgeInSeconds"`
	BisectBatchOnFunctionError     *bool                  `json:"BisectBatchOnFunctionError"`
	MaximumRetryAttempts           *int64                 `json:"MaximumRetryAttempts"`
	TumblingWindowInSeconds        *int64                 `json:"TumblingWindowInSeconds"`
	FunctionResponseTypes          *[]string              `json:"FunctionResponseTypes"`
	ScalingConfig                  *wireScalingConfig     `json:"ScalingConfig"`
	MetricsConfig                  *wireMetricsConfig     `json:"MetricsConfig"`
	Tags                           map[string]string      `json:"Tags"`
	Topics                         []string               `json:"Topics"`
	Queues                         []string               `json:"Queues"`
	SourceAccessConfigurations     []json.RawMessage      `json:"SourceAccessConfigurations"`
}

// Configuration is EventSourceMappingConfiguration as Lambda returns it.
// The members a source kind does not have are omitted, as Lambda omits
// them (a queue mapping has no StartingPosition or ParallelizationFactor).
type Configuration struct {
	UUID                           string                 `json:"UUID"`
	StartingPosition               string                 `json:"StartingPosition,omitempty"`
	StartingPositionTimestamp      *float64               `json:"StartingPositionTimestamp,omitempty"`
	BatchSize                      int                    `json:"BatchSize"`
	MaximumBatchingWindowInSeconds int                    `json:"MaximumBatchingWindowInSeconds"`
	ParallelizationFactor          *int                   `json:"ParallelizationFactor,omitempty"`
	EventSourceArn                 string                 `json:"EventSourceArn"`
	FilterCriteria                 *wireFilterCriteria    `json:"FilterCriteria,omitempty"`
	FunctionArn                    string                 `json:"FunctionArn"`
	LastModified                   float64                `json:"LastModified"`
	LastProcessingResult           string                 `json:"LastProcessingResult,omitempty"`
	State                          string                 `json:"State"`
	StateTransitionReason          string                 `json:"StateTransitionReason"`
	DestinationConfig              *wireDestinationConfig `json:"DestinationConfig,omitempty"`
	MaximumRecordAgeInSeconds      *int                   `json:"MaximumRecordAgeInSeconds,omitempty"`
	BisectBatchOnFunctionError     *bool                  `json:"BisectBatchOnFunctionError,omitempty"`
	MaximumRetryAttempts           *int                   `json:"MaximumRetryAttempts,omitempty"`
	TumblingWindowInSeconds        *int                   `json:"TumblingWindowInSeconds,omitempty"`
	FunctionResponseTypes          []string               `json:"FunctionResponseTypes"`
	ScalingConfig                  *wireScalingConfig     `json:"ScalingConfig,omitempty"`
	MetricsConfig                  *wireMetricsConfig     `json:"MetricsConfig,omitempty"`
	EventSourceMappingArn          string                 `json:"EventSourceMappingArn"`
}
