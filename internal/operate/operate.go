// Package operate is what the outbox command does: it finds a pipeline's
// components by the pipeline's name, as the provider names them, and
// reports on them (status, failed), puts failed events back in the pending
// index (requeue), waits for the outbox to empty (drain), publishes past
// events again (replay) and settles the dead-letter queue (redrive).
//
// Nothing here needs Terraform state: the relay function's environment says
// which table and target the pipeline has, and every other component is
// found by its name. Every request on an outbox item comes from package
// outbox, and events are published by the relay's own publishers, so a
// replayed event is the event the relay published.
package operate

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatchlogs"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge"
	"github.com/aws/aws-sdk-go-v2/service/lambda"
	"github.com/aws/aws-sdk-go-v2/service/sns"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/smithy-go"
)

// Clients are the AWS clients the operations use.
type Clients struct {
	DynamoDB    *dynamodb.Client
	Lambda      *lambda.Client
	SQS         *sqs.Client
	EventBridge *eventbridge.Client
	SNS         *sns.Client
	Logs        *cloudwatchlogs.Client
	// AWS builds the client of the target that replay publishes to.
	AWS aws.Config
}

// NewClients builds the clients from cfg.
func NewClients(cfg aws.Config) *Clients {
	return &Clients{
		DynamoDB:    dynamodb.NewFromConfig(cfg),
		Lambda:      lambda.NewFromConfig(cfg),
		SQS:         sqs.NewFromConfig(cfg),
		EventBridge: eventbridge.NewFromConfig(cfg),
		SNS:         sns.NewFromConfig(cfg),
		Logs:        cloudwatchlogs.NewFromConfig(cfg),
		AWS:         cfg,
	}
}

// ErrNotFound is wrapped by errors about a component that does not exist.
var ErrNotFound = errors.New("not found")

// PermissionError reports a call that IAM denied, with the permission to
// grant.
type PermissionError struct {
	// Action is the IAM action, such as "dynamodb:Query", or the actions,
	// joined by " and ", that authorise the call (IAMActions).
	Action string
	// Resource names what the action was called on.
	Resource string
	Err      error
}

func (e *PermissionError) Error() string {
	return fmt.Sprintf("%s on %s was denied: grant %s on it to the identity that runs outbox (the operations guide lists the permissions of each subcommand): %v",
		e.Action, e.Resource, e.Action, e.Err)
}

func (e *PermissionError) Unwrap() error { return e.Err }

// call wraps err, from the API operation ("service:Operation") on
// resource: an access error becomes a *PermissionError that names the IAM
// actions to grant (IAMActions); any other error says which call failed.
//
// Credentials that AWS does not know are a "not found" error
// (ErrNotFound), with what to check.
func call(operation, resource string, err error) error {
	switch {
	case err == nil:
		return nil
	case hasCode(err, unknownCredentialCodes...):
		return notFoundError{fmt.Errorf("%s on %s: AWS does not know the credentials (unknown, expired or mistyped keys): renew them, or check --profile: %w", operation, resource, err)}
	case isAccessDenied(err):
		return &PermissionError{Action: strings.Join(IAMActions(operation), " and "), Resource: resource, Err: err}
	}
	return fmt.Errorf("%s on %s: %w", operation, resource, err)
}

// operationActions are the API operations whose IAM actions are not
// named after them ("Actions, resources, and condition keys", Service
// Authorization Reference): a transaction is authorised action by action
// (the command's transactions hold only updates: outbox.Table.SkipActions),
// a batch by the action of one entry, and HeadObject by s3:GetObject.
var operationActions = map[string][]string{
	"dynamodb:TransactWriteItems":      {"dynamodb:UpdateItem"},
	"sns:PublishBatch":                 {"sns:Publish"},
	"sqs:SendMessageBatch":             {"sqs:SendMessage"},
	"sqs:DeleteMessageBatch":           {"sqs:DeleteMessage"},
	"sqs:ChangeMessageVisibilityBatch": {"sqs:ChangeMessageVisibility"},
	"s3:HeadObject":                    {"s3:GetObject"},
}

// IAMActions are the IAM actions that authorise the API operations
// ("service:Operation"), each once, in order.
func IAMActions(operations ...string) []string {
	var out []string
	for _, op := range operations {
		actions, ok := operationActions[op]
		if !ok {
			actions = []string{op}
		}
		for _, a := range actions {
			if !slices.Contains(out, a) {
				out = append(out, a)
			}
		}
	}
	return out
}

// unknownCredentialCodes are the error codes of a request signed with
// credentials that AWS does not accept.
var unknownCredentialCodes = []string{"UnrecognizedClientException", "InvalidClientTokenId", "ExpiredToken", "ExpiredTokenException", "InvalidSignatureException", "SignatureDoesNotMatch"}

func isAccessDenied(err error) bool {
	var ae smithy.APIError
	if !errors.As(err, &ae) {
		return false
	}
	code := ae.ErrorCode()
	return strings.Contains(code, "AccessDenied") || code == "AuthorizationError" ||
		code == "UnauthorizedOperation" || code == "NotAuthorized"
}

func hasCode(err error, codes ...string) bool {
	var ae smithy.APIError
	if !errors.As(err, &ae) {
		return false
	}
	for _, c := range codes {
		if ae.ErrorCode() == c {
			return true
		}
	}
	return false
}

func isNotFound(err error) bool {
	return hasCode(err, "ResourceNotFoundException", "AWS.SimpleQueueService.NonExistentQueue", "QueueDoesNotExist", "NotFoundException")
}
