// Package localawstest starts a local AWS stack for tests.
//
//	stack := localawstest.Start(t)
//	cfg := localawstest.Config(stack)
//	ddb := dynamodb.NewFromConfig(cfg)
package localawstest

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/outboxkit/terraform-provider-outbox/internal/localaws"
	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/awsapi"
	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/control"
	localddb "github.com/outboxkit/terraform-provider-outbox/internal/localaws/dynamodb"
)

// clients holds the HTTP client of each stack started by Start, handed out
// by Config.
var clients sync.Map // *localaws.Stack → *http.Client

// Start starts a stack on a free port of 127.0.0.1, closed on t.Cleanup.
// opts modify the Options before start.
//
// SDK clients built from Config share one HTTP client per stack, whose
// idle connections are closed before the stack stops: the server's
// shutdown otherwise waits up to 5 s for connections a transport dialed
// but never used.
func Start(t testing.TB, opts ...func(*localaws.Options)) *localaws.Stack {
	t.Helper()
	o := localaws.Options{Addr: "127.0.0.1:0", Logger: slog.New(slog.DiscardHandler)}
	for _, fn := range opts {
		fn(&o)
	}
	ctx, cancel := context.WithCancel(context.Background())
	s, err := localaws.Start(ctx, o)
	if err != nil {
		cancel()
		t.Fatalf("starting local AWS stack: %v", err)
	}
	transport := awshttp.NewBuildableClient().GetTransport()
	transport.MaxIdleConnsPerHost = 64
	clients.Store(s, &http.Client{Transport: transport})
	t.Cleanup(func() {
		clients.Delete(s)
		transport.CloseIdleConnections()
		cancel()
		if err := s.Close(); err != nil {
			t.Errorf("closing local AWS stack: %v", err)
		}
	})
	return s
}

// StartEmpty is Start with no service of the stack's own: the test
// registers the services it runs with Serve.
func StartEmpty(t testing.TB, opts ...func(*localaws.Options)) *localaws.Stack {
	t.Helper()
	return Start(t, append([]func(*localaws.Options){func(o *localaws.Options) { o.NoServices = true }}, opts...)...)
}

// Serve registers services with the stack s, in order, and fails t if one
// cannot be registered.
func Serve(t testing.TB, s *localaws.Stack, services ...awsapi.Service) {
	t.Helper()
	for _, svc := range services {
		if err := s.Register(svc); err != nil {
			t.Fatal(err)
		}
	}
}

// StartDynamoDB is StartEmpty serving only DynamoDB, whose expired items
// are deleted only when the test sweeps them.
func StartDynamoDB(t testing.TB, opts ...func(*localaws.Options)) *localaws.Stack {
	t.Helper()
	s := StartEmpty(t, opts...)
	Serve(t, s, localddb.New(s.Env(), localddb.Options{TTLSweepInterval: -1}))
	return s
}

// WithLogger sends the stack's request log to t.Log.
func WithLogger(t testing.TB) func(*localaws.Options) {
	return func(o *localaws.Options) {
		o.Logger = slog.New(slog.NewTextHandler(tWriter{t}, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
}

type tWriter struct{ t testing.TB }

func (w tWriter) Write(p []byte) (int, error) {
	w.t.Log(string(p))
	return len(p), nil
}

// Config returns an aws.Config pointed at the stack with static
// administrator credentials, the stack's region and the SDK's default
// retryer. It reads no environment or shared files. For a stack started by
// Start, its HTTPClient is the stack's (see Start).
func Config(s *localaws.Stack) aws.Config {
	return ConfigWithCredentials(s, "AKIDLOCALADMIN", "localadminsecret", "")
}

// RegionConfig is Config for another Region of the stack: the SDK signs
// its requests for region, and the stack serves them there.
func RegionConfig(s *localaws.Stack, region string) aws.Config {
	cfg := Config(s)
	cfg.Region = region
	return cfg
}

// ConfigWithCredentials is Config with given credentials (for example role
// credentials issued by the stack).
func ConfigWithCredentials(s *localaws.Stack, akid, secret, token string) aws.Config {
	cfg := aws.Config{
		Region:       s.Options().Region,
		Credentials:  credentials.NewStaticCredentialsProvider(akid, secret, token),
		BaseEndpoint: aws.String(s.Endpoint()),
	}
	if c, ok := clients.Load(s); ok {
		if hc, ok := c.(*http.Client); ok {
			cfg.HTTPClient = hc
		}
	}
	return cfg
}

// RoleConfig is Config with credentials the stack issues for a session of
// the role roleArn.
func RoleConfig(s *localaws.Stack, roleArn string) aws.Config {
	akid, secret, token := s.Env().Credentials.IssueRoleCredentials(roleArn)
	return ConfigWithCredentials(s, akid, secret, token)
}

// Control returns a control API client for the stack.
func Control(s *localaws.Stack) *control.Client {
	return control.New(s.Endpoint(), nil)
}

// AdminsOnly is an authorizer that allows administrators and denies every
// role session, with IAM's reason: a stand-in for the IAM service.
type AdminsOnly struct{}

// Authorize implements awsapi.Authorizer.
func (AdminsOnly) Authorize(p awsapi.Principal, action, _ string) error {
	if p.Admin {
		return nil
	}
	return errors.New("because no identity-based policy allows the " + action + " action")
}

// Protocol is a wire protocol an SDK client is switched to, by an option
// of the client's Options type O (e.g. sqs.Options).
type Protocol[O any] struct {
	Name   string
	Option func(*O)
}

// EachProtocol runs test once per protocol, each a parallel subtest named
// for it.
func EachProtocol[O any](t *testing.T, protocols []Protocol[O], test func(*testing.T, Protocol[O])) {
	t.Helper()
	t.Parallel()
	for _, p := range protocols {
		t.Run(p.Name, func(t *testing.T) {
			t.Parallel()
			test(t, p)
		})
	}
}

// TableInput is the CreateTable input of an on-demand table keyed by the
// string attributes hashKey and rangeKey ("" for a hash key only), with a
// stream of viewType ("" for none).
func TableInput(name, hashKey, rangeKey string, viewType types.StreamViewType) *dynamodb.CreateTableInput {
	in := &dynamodb.CreateTableInput{TableName: aws.String(name), BillingMode: types.BillingModePayPerRequest}
	keys := []struct {
		name string
		typ  types.KeyType
	}{{hashKey, types.KeyTypeHash}, {rangeKey, types.KeyTypeRange}}
	for _, k := range keys {
		if k.name == "" {
			continue
		}
		in.AttributeDefinitions = append(in.AttributeDefinitions, types.AttributeDefinition{AttributeName: aws.String(k.name), AttributeType: types.ScalarAttributeTypeS})
		in.KeySchema = append(in.KeySchema, types.KeySchemaElement{AttributeName: aws.String(k.name), KeyType: k.typ})
	}
	if viewType != "" {
		in.StreamSpecification = &types.StreamSpecification{StreamEnabled: aws.Bool(true), StreamViewType: viewType}
	}
	return in
}

// StrongGlobalTableInput is the UpdateTable input that makes the table name
// a global table with multi-Region strong consistency (MRSC): a replica in
// replica and a witness in witness ("" for none).
func StrongGlobalTableInput(name, replica, witness string) *dynamodb.UpdateTableInput {
	in := &dynamodb.UpdateTableInput{TableName: aws.String(name), MultiRegionConsistency: types.MultiRegionConsistencyStrong,
		ReplicaUpdates: []types.ReplicationGroupUpdate{{Create: &types.CreateReplicationGroupMemberAction{RegionName: aws.String(replica)}}}}
	if witness != "" {
		in.GlobalTableWitnessUpdates = []types.GlobalTableWitnessGroupUpdate{{Create: &types.CreateGlobalTableWitnessGroupMemberAction{RegionName: aws.String(witness)}}}
	}
	return in
}
