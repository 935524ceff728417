// Package localaws is a local AWS-compatible endpoint: one HTTP listener
// serving the AWS APIs the provider and the relay call, with AWS's documented
// behaviour, for the real aws-sdk-go-v2 clients.
//
// Start a stack with Start (or localawstest.Start in tests) and point the
// SDK's BaseEndpoint at Stack.Endpoint. Any access key works and is an
// administrator; keys issued through the stack's Credentials (STS AssumeRole,
// Lambda execution roles) carry a role session.
//
// Services live in their own packages (internal/localaws/<service>) and know
// nothing of each other. They are wired here: each service has a file
// wire_<service>.go that calls registerService from an init function with a
// builder, so adding a service touches no shared file:
//
//	func init() {
//		registerService("sqs", func(s *Stack) ([]awsapi.Service, error) {
//			return []awsapi.Service{sqs.New(s.Env())}, nil
//		})
//	}
//
// Builders run in name order, each after the builders it names as
// dependencies, and may look up services built before them with
// Stack.Service (type-asserting to what they need). Services with
// background work implement awsapi.Closer; Stack.Close stops them in reverse
// order.
package localaws

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"runtime/debug"
	"slices"
	"sort"
	"strconv"
	"sync"
	"time"

	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/awsapi"
	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/dynamodb"
)

// Defaults of Options.
const (
	DefaultAddr             = "127.0.0.1:4566"
	DefaultStreamRetention  = 24 * time.Hour
	DefaultTTLSweepInterval = time.Second
)

// Options configure a stack. The zero value is usable.
type Options struct {
	// Addr is the listen address; default 127.0.0.1:4566. Use
	// "127.0.0.1:0" for a free port.
	Addr string
	// Region and AccountID default to us-east-1 and 000000000000.
	Region    string
	AccountID string
	// StreamRetention is how long DynamoDB stream records are kept;
	// default 24h.
	StreamRetention time.Duration
	// TTLSweepInterval is how often expired items are deleted by DynamoDB
	// TTL; default 1s (AWS takes up to days; tests want it fast).
	TTLSweepInterval time.Duration
	// LifecycleSweepInterval is how often S3 deletes the objects its
	// buckets' lifecycle rules expire, on the stack's clock; default 1s
	// (AWS applies the rules once a day). Negative: never.
	LifecycleSweepInterval time.Duration
	// StreamIteratorLifetime is how long a DynamoDB Streams shard iterator
	// stays valid; default 15 minutes, as on AWS.
	StreamIteratorLifetime time.Duration
	// StreamShards is how many shards of each DynamoDB stream take
	// records at once; records go to a shard by a hash of the item's
	// partition key. Default 1.
	StreamShards int
	// StreamShardLifetime is how long a stream's shards take records
	// before they close and child shards open (a rollover, as on AWS,
	// where it happens about every four hours). Default 0: never.
	StreamShardLifetime time.Duration
	// ReplicationLag is how long a DynamoDB global table's write takes to
	// reach the other Regions' replicas; default
	// dynamodb.DefaultReplicationLag (100ms). The control route
	// POST /_localaws/dynamodb/replication changes it.
	ReplicationLag time.Duration
	// GCPercent, when above 0, sets the process's garbage collector
	// target (debug.SetGCPercent, as GOGC) at Start. The stack keeps every
	// table in memory; with Go's default of 100 each collection marks a
	// heap that grows with the tables, and writes to a table of 100,000
	// items run at about 0.6 to 0.8 of the rate of an empty one, against
	// about 1 with 400 (BenchmarkWriteRateBySize in
	// internal/localaws/dynamodb), for a peak heap of up to five times the
	// live one. The setting is process-wide and stays after Close;
	// cmd/localaws sets 400. Default 0: unchanged.
	GCPercent int
	// IAMPropagationDelay is how long IAM changes take to become
	// visible: for that long after a role or its policies change, the
	// role cannot be assumed by services and the authorizer keeps the
	// previous permissions, like IAM's eventual consistency. Default 0.
	IAMPropagationDelay time.Duration
	// DeduplicationWindow is how long SQS FIFO queues and SNS FIFO topics
	// remember a deduplication id (and SQS a ReceiveRequestAttemptId).
	// Default five minutes, as on AWS; tests shorten it to see a
	// duplicate delivered again after the window without waiting.
	DeduplicationWindow time.Duration
	// Logger receives one line per request; default discards.
	Logger *slog.Logger
	// Disable lists services (by Spec.Name or builder name) not to start.
	Disable []string
	// NoServices starts the stack with no services at all (tests that
	// register their own with Stack.Register).
	NoServices bool
}

func (o *Options) defaults() {
	if o.Addr == "" {
		o.Addr = DefaultAddr
	}
	if o.Region == "" {
		o.Region = awsapi.DefaultRegion
	}
	if o.AccountID == "" {
		o.AccountID = awsapi.DefaultAccountID
	}
	if o.StreamRetention <= 0 {
		o.StreamRetention = DefaultStreamRetention
	}
	if o.TTLSweepInterval <= 0 {
		o.TTLSweepInterval = DefaultTTLSweepInterval
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
}

// Builder constructs the services of one package. It may look up services
// built before it (see registerService's after) with s.Service.
type Builder func(s *Stack) ([]awsapi.Service, error)

type builder struct {
	name  string
	after []string
	build Builder
}

var (
	buildersMu sync.Mutex
	builders   []builder
)

// registerService adds a builder, called from init functions of the
// wire_<service>.go files. after names builders that must run first.
func registerService(name string, build Builder, after ...string) {
	buildersMu.Lock()
	defer buildersMu.Unlock()
	builders = append(builders, builder{name: name, after: after, build: build})
}

// orderedBuilders sorts builders by name, then moves each after its
// dependencies.
func orderedBuilders() ([]builder, error) {
	buildersMu.Lock()
	pending := append([]builder(nil), builders...)
	buildersMu.Unlock()
	sort.Slice(pending, func(i, j int) bool { return pending[i].name < pending[j].name })
	known := map[string]bool{}
	for _, b := range pending {
		known[b.name] = true
	}
	done := map[string]bool{}
	var out []builder
	for len(pending) > 0 {
		progressed := false
		rest := pending[:0]
		for _, b := range pending {
			ready := true
			for _, dep := range b.after {
				if known[dep] && !done[dep] {
					ready = false
				}
			}
			if ready {
				out = append(out, b)
				done[b.name] = true
				progressed = true
			} else {
				rest = append(rest, b)
			}
		}
		pending = rest
		if !progressed {
			return nil, fmt.Errorf("service builders have a dependency cycle: %v", pending)
		}
	}
	return out, nil
}

// Stack is a running local AWS stack. The stack Start returns serves the
// default Region (Options.Region); the other Regions' stacks (Region) share
// its listener, account and global services and hold their own
// resources.
type Stack struct {
	opts     Options
	env      *awsapi.Env
	router   *awsapi.Router
	listener net.Listener
	server   *http.Server
	endpoint string
	done     chan struct{}
	// root is the default Region's stack; nil for that stack itself.
	root    *Stack
	regions *regions

	closeOnce sync.Once
	closeErr  error
}

// Start listens on opts.Addr, builds every registered service and serves
// until ctx is done or Close is called.
func Start(ctx context.Context, opts Options) (*Stack, error) {
	opts.defaults()
	if opts.GCPercent > 0 {
		debug.SetGCPercent(opts.GCPercent)
	}
	ln, err := net.Listen("tcp", opts.Addr)
	if err != nil {
		return nil, fmt.Errorf("listening on %s: %w", opts.Addr, err)
	}
	env := awsapi.NewEnv(opts.Region, opts.AccountID, opts.Logger)
	env.Endpoint = "http://" + ln.Addr().String()
	s := &Stack{
		opts:     opts,
		env:      env,
		router:   awsapi.NewRouter(env),
		listener: ln,
		endpoint: env.Endpoint,
		done:     make(chan struct{}),
		regions:  newRegions(),
	}
	s.regions.replication = dynamodb.NewReplication(opts.ReplicationLag, s.regionDynamoDB)
	if err := s.buildServices(); err != nil {
		_ = s.closeServices()
		_ = ln.Close()
		return nil, err
	}
	s.registerRegionControl()
	s.server = &http.Server{Handler: http.HandlerFunc(s.serveHTTP), ReadHeaderTimeout: 30 * time.Second}
	go func() {
		defer close(s.done)
		if err := s.server.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			opts.Logger.Error("local AWS stack stopped", "error", err)
		}
	}()
	go func() {
		select {
		case <-ctx.Done():
			_ = s.Close()
		case <-s.done:
		}
	}()
	opts.Logger.Info("local AWS stack listening", "endpoint", s.endpoint, "region", opts.Region, "account", opts.AccountID)
	return s, nil
}

// Endpoint is the base URL for the SDK's BaseEndpoint
// (http://127.0.0.1:4566).
func (s *Stack) Endpoint() string { return s.endpoint }

// Port is the TCP port the stack listens on.
func (s *Stack) Port() int {
	_, p, _ := net.SplitHostPort(s.listener.Addr().String())
	n, _ := strconv.Atoi(p)
	return n
}

// Options returns the effective options.
func (s *Stack) Options() Options { return s.opts }

// Env returns the environment shared with services: region, account,
// credentials, faults, authorizer.
func (s *Stack) Env() *awsapi.Env { return s.env }

// Router returns the stack's router, for registering extra services (tests).
func (s *Stack) Router() *awsapi.Router { return s.router }

// Service returns a registered service by Spec.Name.
func (s *Stack) Service(name string) (awsapi.Service, bool) { return s.router.Service(name) }

// Register adds a service to a running stack (tests, extensions).
func (s *Stack) Register(svc awsapi.Service) error { return s.router.Register(svc) }

// Close stops the listener and the services' background work.
func (s *Stack) Close() error {
	s.closeOnce.Do(func() {
		// Requests still in flight after a grace period (an SQS long poll
		// waits up to 20 s) are cut off: the stack stops either way, so
		// only a failure to close is an error.
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		var err error
		if s.server.Shutdown(ctx) != nil {
			err = s.server.Close()
		}
		<-s.done
		s.closeErr = errors.Join(err, s.closeServices())
	})
	return s.closeErr
}

// buildServices runs every registered builder for s's Region, in order. A
// Region's stack registers the default Region's global services (IAM, STS,
// S3) instead of building its own.
func (s *Stack) buildServices() error {
	ordered, err := orderedBuilders()
	if err != nil {
		return err
	}
	for _, b := range ordered {
		if s.opts.NoServices || slices.Contains(s.opts.Disable, b.name) {
			continue
		}
		var svcs []awsapi.Service
		if s.root != nil && globalBuilders[b.name] {
			svcs = s.regions.built[b.name]
		} else if svcs, err = b.build(s); err != nil {
			return fmt.Errorf("building %s: %w", b.name, err)
		} else if s.root == nil {
			s.regions.built[b.name] = svcs
		}
		for _, svc := range svcs {
			if slices.Contains(s.opts.Disable, svc.Spec().Name) {
				continue
			}
			if err := s.router.Register(svc); err != nil {
				return err
			}
		}
	}
	return nil
}

func (s *Stack) closeServices() error {
	var errs []error
	if s.root == nil {
		s.regions.replication.Close()
		for _, st := range s.regions.regionStacks(true) {
			errs = append(errs, st.closeServices())
		}
	}
	svcs := s.router.Services()
	for i := len(svcs) - 1; i >= 0; i-- {
		if s.root != nil && s.regions.global(svcs[i]) {
			continue // the default Region's to close
		}
		if c, ok := svcs[i].(awsapi.Closer); ok {
			if err := c.Close(); err != nil {
				errs = append(errs, fmt.Errorf("closing %s: %w", svcs[i].Spec().Name, err))
			}
		}
	}
	return errors.Join(errs...)
}
