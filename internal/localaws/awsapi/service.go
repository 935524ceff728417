package awsapi

import (
	"log/slog"
	"net/http"
	"slices"
	"sync/atomic"
	"time"
)

// Protocol is the wire protocol a service speaks.
type Protocol int

// The protocols of the aws-sdk-go-v2 clients (see each service's
// api_client.go: options.Protocol).
const (
	// JSON10 is awsJson1_0: DynamoDB, DynamoDB Streams, SQS.
	JSON10 Protocol = iota + 1
	// JSON11 is awsJson1_1: EventBridge, CloudWatch Logs.
	JSON11
	// Query is awsQuery: IAM, STS, SNS.
	Query
	// RESTJSON is restJson1: Lambda, Scheduler.
	RESTJSON
	// RPCv2CBOR is smithy rpcv2Cbor: CloudWatch (monitoring).
	RPCv2CBOR
	// RESTXML is restXml: S3. Results are a *Raw, nil (an empty 200) or a
	// value encoded with encoding/xml; errors are S3's <Error> document.
	RESTXML
)

// String names the protocol.
func (p Protocol) String() string {
	switch p {
	case JSON10:
		return "awsJson1_0"
	case JSON11:
		return "awsJson1_1"
	case Query:
		return "awsQuery"
	case RESTJSON:
		return "restJson1"
	case RPCv2CBOR:
		return "rpcv2Cbor"
	case RESTXML:
		return "restXml"
	}
	return "unknown"
}

// Spec tells the router how AWS addresses a service.
type Spec struct {
	// Name is the short name used in logs, faults, the inventory and
	// control routes ("dynamodb", "dynamodbstreams", "sqs", "lambda").
	Name string
	// Protocol is the wire protocol.
	Protocol Protocol
	// TargetPrefix is the X-Amz-Target prefix of JSON protocols
	// ("DynamoDB_20120810") and the service name in rpcv2Cbor paths
	// ("GraniteServiceVersion20100801").
	TargetPrefix string
	// SigningName is the SigV4 service of the credential scope ("dynamodb",
	// "lambda", "sns"). Used to route requests without a target.
	SigningName string
	// ErrorNamespace, when set, prefixes JSON error types as AWS does
	// ("com.amazonaws.dynamodb.v20120810" gives
	// "com.amazonaws.dynamodb.v20120810#ResourceNotFoundException").
	ErrorNamespace string
	// XMLNamespace is the xmlns of awsQuery responses
	// ("https://sns.amazonaws.com/doc/2010-03-31/").
	XMLNamespace string
	// PathPrefixes route requests with neither target nor credential scope
	// by URL path ("/2015-03-31/functions/").
	PathPrefixes []string
	// CRC32 adds the X-Amz-Crc32 header (crc32 IEEE of the body) to
	// responses, as DynamoDB does.
	CRC32 bool
	// Protocols are the further wire protocols the service answers in
	// (SQS: awsQuery; CloudWatch: rpcv2Cbor and awsQuery). The router
	// transcodes them to and from Protocol, the form the handler reads and
	// writes, through the operation's Shapes; Protocol must be JSON10 or
	// JSON11 then.
	Protocols []Protocol
	// Shapes are the Smithy schemas of the operations, needed to transcode
	// Protocols.
	Shapes Shapes
}

// accepts reports whether the service answers in wire protocol p.
func (s Spec) accepts(p Protocol) bool {
	return p == s.Protocol || slices.Contains(s.Protocols, p)
}

// Service is one AWS service of the stack.
type Service interface {
	// Spec describes how the service is addressed.
	Spec() Spec
	// Handle serves one request. It returns the output value (encoded for
	// the protocol), a *Raw, or an error (an *Error keeps its code).
	Handle(req *Request) (any, error)
}

// OperationResolver is implemented by REST services, whose operation is not
// named on the wire: it maps method and path to the operation name (used for
// logs and faults) before Handle is called. An empty name is an unknown
// operation.
type OperationResolver interface {
	ResolveOperation(r *http.Request) string
}

// Inventory is implemented by services that can list what they hold (ARNs
// or names), for GET /_localaws/resources.
type Inventory interface {
	Inventory() []string
}

// ControlRegistrar is implemented by services with their own control routes
// under /_localaws/. It is called once when the service is registered.
type ControlRegistrar interface {
	RegisterControl(c *Control)
}

// Closer is implemented by services with background work to stop.
type Closer interface {
	Close() error
}

// Env is what the stack shares with its services: identity, region, logger,
// credentials, authorisation and faults.
type Env struct {
	Region    string
	AccountID string
	Logger    *slog.Logger
	// Endpoint is the stack's base URL (http://127.0.0.1:4566).
	Endpoint string
	// Credentials issues and resolves temporary credentials.
	Credentials *Credentials
	// Faults is the fault injection registry.
	Faults *Faults
	// Now is the clock; time.Now when nil (and, in a Region's Env, the
	// clock of the Env it was made from).
	Now func() time.Time

	authorizer atomic.Pointer[Authorizer]
	// parent is the Env a Region's Env was made from (InRegion), whose
	// clock and authorizer it shares.
	parent *Env
}

// InRegion returns the Env of another Region of the same account: it shares
// e's logger, endpoint, credentials, faults, clock and authorizer (IAM is
// global), and formats ARNs with region.
func (e *Env) InRegion(region string) *Env {
	return &Env{Region: region, AccountID: e.AccountID, Logger: e.Logger, Endpoint: e.Endpoint,
		Credentials: e.Credentials, Faults: e.Faults, parent: e}
}

// NewEnv returns an Env with defaults for empty fields.
func NewEnv(region, accountID string, logger *slog.Logger) *Env {
	if region == "" {
		region = DefaultRegion
	}
	if accountID == "" {
		accountID = DefaultAccountID
	}
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	e := &Env{Region: region, AccountID: accountID, Logger: logger, Faults: NewFaults()}
	e.Credentials = NewCredentials(e)
	return e
}

// SetAuthorizer installs the authorizer (the IAM service) consulted by
// Request.Authorize. nil allows everything.
func (e *Env) SetAuthorizer(a Authorizer) {
	e.authorizer.Store(&a)
}

// Authorizer returns the installed authorizer, or nil.
func (e *Env) Authorizer() Authorizer {
	if a := e.authorizer.Load(); a != nil {
		return *a
	}
	if e.parent != nil {
		return e.parent.Authorizer()
	}
	return nil
}

// Time returns the current time of the stack's clock.
func (e *Env) Time() time.Time {
	if e.Now != nil {
		return e.Now()
	}
	if e.parent != nil {
		return e.parent.Time()
	}
	return time.Now()
}

// ARN formats an ARN of this stack's partition, region and account.
func (e *Env) ARN(service, resource string) string {
	return ARN(service, e.Region, e.AccountID, resource)
}

// GlobalARN formats an ARN with no region (IAM).
func (e *Env) GlobalARN(service, resource string) string {
	return ARN(service, "", e.AccountID, resource)
}
