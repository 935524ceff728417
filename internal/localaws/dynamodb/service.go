package dynamodb

import (
	"context"
	"sync"
	"time"

	mini "github.com/outboxkit/terraform-provider-outbox/third_party/minidyn/server"

	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/awsapi"
)

// Options configure the DynamoDB service.
type Options struct {
	// StreamRetention is how long stream records stay readable; default
	// 24h.
	StreamRetention time.Duration
	// IteratorLifetime is how long a shard iterator stays valid; default
	// 15 minutes, as on AWS.
	IteratorLifetime time.Duration
	// TTLSweepInterval is how often expired items are deleted; default 1s.
	// Negative disables the sweeper (call SweepTTL directly).
	TTLSweepInterval time.Duration
	// StreamShards is how many shards of a stream take records at once;
	// an item's records go to one of them by a hash of its partition key.
	// Default 1.
	StreamShards int
	// StreamShardLifetime is how long shards take records before they
	// close and a child shard opens for each (a rollover); 0, the
	// default, never rolls over.
	StreamShardLifetime time.Duration
	// Replication carries global tables' writes to and from the other
	// Regions' services; nil serves no global tables.
	Replication *Replication
	// Metrics, when it returns a sink, receives the CloudWatch metrics
	// DynamoDB publishes (ReplicationLatency); nil or a nil sink: none.
	Metrics func() MetricSink
}

// MetricSink records CloudWatch metrics (the cloudwatch service).
type MetricSink interface {
	PutMetric(namespace, name string, dims map[string]string, value float64, unit string)
}

// Service is the DynamoDB API (target DynamoDB_20120810).
type Service struct {
	env  *awsapi.Env
	opts Options

	// mu serialises every operation on the engine so that each write and
	// its stream records are atomic.
	mu     sync.Mutex
	engine *mini.Client
	tables map[string]*table

	streams *Streams
	stop    chan struct{}
	done    chan struct{}
	ops     awsapi.Operations
	*awsapi.Lifecycle
}

// New returns the DynamoDB service. Streams returns the DynamoDB Streams
// service sharing its stream store; register both.
func New(env *awsapi.Env, opts Options) *Service {
	if opts.StreamRetention <= 0 {
		opts.StreamRetention = 24 * time.Hour
	}
	if opts.IteratorLifetime <= 0 {
		opts.IteratorLifetime = 15 * time.Minute
	}
	if opts.TTLSweepInterval == 0 {
		opts.TTLSweepInterval = time.Second
	}
	s := &Service{
		env:     env,
		opts:    opts,
		engine:  mini.NewClient(),
		tables:  map[string]*table{},
		streams: newStreams(env, opts.StreamRetention, opts.StreamShards, opts.StreamShardLifetime),
		stop:    make(chan struct{}),
		done:    make(chan struct{}),
	}
	s.Lifecycle = awsapi.NewLifecycle()
	s.ops = s.operations()
	s.Lists(nil, s.inventory)
	// Closing stops the TTL sweeper and the stream trimmer.
	s.OnStop(func() {
		close(s.stop)
		<-s.done
	})
	go s.background()
	return s
}

// Spec implements awsapi.Service.
func (s *Service) Spec() awsapi.Spec {
	sp := apiSpec("dynamodb", "DynamoDB_20120810")
	sp.CRC32 = true
	return sp
}

// apiSpec is the Spec of one of the two JSON 1.0 APIs, DynamoDB and
// DynamoDB Streams, that share a signing name and an error namespace.
func apiSpec(name, targetPrefix string) awsapi.Spec {
	return awsapi.Spec{Name: name, Protocol: awsapi.JSON10, TargetPrefix: targetPrefix,
		SigningName: "dynamodb", ErrorNamespace: "com.amazonaws.dynamodb.v20120810"}
}

// Streams returns the stream store: the in-process stream API.
func (s *Service) Streams() *Streams { return s.streams }

// StreamsAPI returns the DynamoDB Streams service (target
// DynamoDBStreams_20120810) reading this service's streams.
func (s *Service) StreamsAPI() awsapi.Service {
	a := &streamsAPI{svc: s}
	a.ops = a.operations()
	return a
}

// inventory lists table ARNs and readable stream ARNs; the stream store
// has its own lock.
func (s *Service) inventory(add func(string)) {
	s.mu.Lock()
	for _, t := range s.tables {
		add(t.arn)
	}
	s.mu.Unlock()
	for _, st := range s.streams.List("") {
		add(st.StreamArn)
	}
}

func (s *Service) background() {
	defer close(s.done)
	interval := s.opts.TTLSweepInterval
	if interval < 0 {
		interval = time.Minute
	}
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-s.stop:
			return
		case <-t.C:
			if s.opts.TTLSweepInterval > 0 {
				s.SweepTTL()
			}
			s.streams.trim()
		}
	}
}

// tableNameInput is the input of the operations that name only a table.
type tableNameInput struct{ TableName string }

// operations is the table of the operations served, each decoded into its
// input and, where it says so, run under s.mu.
func (s *Service) operations() awsapi.Operations {
	return awsapi.Operations{
		"CreateTable":               {Handle: awsapi.Decoded(s.createTable)},
		"DescribeTable":             {Handle: awsapi.Locked(&s.mu, s.describeTable)},
		"UpdateTable":               {Handle: awsapi.Locked(&s.mu, s.updateTable)},
		"DeleteTable":               {Handle: awsapi.Locked(&s.mu, s.deleteTable)},
		"ListTables":                {Handle: awsapi.Decoded(s.listTables)},
		"UpdateTimeToLive":          {Handle: awsapi.Decoded(s.updateTimeToLive)},
		"DescribeTimeToLive":        {Handle: awsapi.Locked(&s.mu, s.describeTimeToLive)},
		"DescribeContinuousBackups": {Handle: awsapi.Locked(&s.mu, s.describeContinuousBackups)},
		"UpdateContinuousBackups":   {Handle: awsapi.Decoded(s.updateContinuousBackups)},
		"TagResource":               {Handle: awsapi.Locked(&s.mu, s.tagResource)},
		"UntagResource":             {Handle: awsapi.Locked(&s.mu, s.untagResource)},
		"ListTagsOfResource":        {Handle: awsapi.Locked(&s.mu, s.listTagsOfResource)},
		"PutItem":                   {Handle: awsapi.Decoded(s.putItem)},
		"GetItem":                   {Handle: awsapi.Locked(&s.mu, s.getItem)},
		"UpdateItem":                {Handle: awsapi.Locked(&s.mu, s.updateItem)},
		"DeleteItem":                {Handle: awsapi.Locked(&s.mu, s.deleteItem)},
		"Query":                     {Handle: awsapi.Locked(&s.mu, s.query)},
		"Scan":                      {Handle: awsapi.Locked(&s.mu, s.scan)},
		"BatchWriteItem":            {Handle: awsapi.Locked(&s.mu, s.batchWriteItem)},
		"BatchGetItem":              {Handle: awsapi.Locked(&s.mu, s.batchGetItem)},
		"TransactWriteItems":        {Handle: awsapi.Decoded(s.transactWriteItems)},
		"TransactGetItems":          {Handle: awsapi.Decoded(s.transactGetItems)},
		"DescribeEndpoints":         {Handle: s.describeEndpoints},
		"DescribeLimits":            {Handle: s.describeLimits},
	}
}

// Handle implements awsapi.Service.
func (s *Service) Handle(req *awsapi.Request) (any, error) { return s.ops.Handle(req) }

func (s *Service) describeEndpoints(req *awsapi.Request) (any, error) {
	return map[string]any{"Endpoints": []map[string]any{{"Address": "dynamodb." + s.env.Region + ".amazonaws.com", "CachePeriodInMinutes": 1440}}}, nil
}

func (s *Service) describeLimits(req *awsapi.Request) (any, error) {
	if err := req.Authorize("dynamodb:DescribeLimits", "*"); err != nil {
		return nil, err
	}
	return map[string]int{
		"AccountMaxReadCapacityUnits": 80000, "AccountMaxWriteCapacityUnits": 80000,
		"TableMaxReadCapacityUnits": 40000, "TableMaxWriteCapacityUnits": 40000,
	}, nil
}

var bg = context.Background()
