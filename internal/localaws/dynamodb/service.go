package dynamodb

import (
	"context"
	"sort"
	"sync"
	"time"

	mini "github.com/truora/minidyn/server"

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
	closed  sync.Once
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
		streams: newStreams(env, opts.StreamRetention),
		stop:    make(chan struct{}),
		done:    make(chan struct{}),
	}
	go s.background()
	return s
}

// Spec implements awsapi.Service.
func (s *Service) Spec() awsapi.Spec {
	return awsapi.Spec{
		Name:           "dynamodb",
		Protocol:       awsapi.JSON10,
		TargetPrefix:   "DynamoDB_20120810",
		SigningName:    "dynamodb",
		ErrorNamespace: "com.amazonaws.dynamodb.v20120810",
		CRC32:          true,
	}
}

// Streams returns the stream store: the in-process stream API.
func (s *Service) Streams() *Streams { return s.streams }

// StreamsAPI returns the DynamoDB Streams service (target
// DynamoDBStreams_20120810) reading this service's streams.
func (s *Service) StreamsAPI() awsapi.Service { return &streamsAPI{svc: s} }

// Inventory implements awsapi.Inventory: table ARNs and readable stream
// ARNs.
func (s *Service) Inventory() []string {
	s.mu.Lock()
	var out []string
	for _, t := range s.tables {
		out = append(out, t.arn)
	}
	s.mu.Unlock()
	for _, st := range s.streams.List("") {
		out = append(out, st.StreamArn)
	}
	sort.Strings(out)
	return out
}

// Close stops the TTL sweeper and the stream trimmer.
func (s *Service) Close() error {
	s.closed.Do(func() {
		close(s.stop)
		<-s.done
	})
	return nil
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

type handler func(s *Service, req *awsapi.Request) (any, error)

var operations = map[string]handler{
	"CreateTable":               (*Service).createTable,
	"DescribeTable":             (*Service).describeTable,
	"UpdateTable":               (*Service).updateTable,
	"DeleteTable":               (*Service).deleteTable,
	"ListTables":                (*Service).listTables,
	"UpdateTimeToLive":          (*Service).updateTimeToLive,
	"DescribeTimeToLive":        (*Service).describeTimeToLive,
	"DescribeContinuousBackups": (*Service).describeContinuousBackups,
	"UpdateContinuousBackups":   (*Service).updateContinuousBackups,
	"TagResource":               (*Service).tagResource,
	"UntagResource":             (*Service).untagResource,
	"ListTagsOfResource":        (*Service).listTagsOfResource,
	"PutItem":                   (*Service).putItem,
	"GetItem":                   (*Service).getItem,
	"UpdateItem":                (*Service).updateItem,
	"DeleteItem":                (*Service).deleteItem,
	"Query":                     (*Service).query,
	"Scan":                      (*Service).scan,
	"BatchWriteItem":            (*Service).batchWriteItem,
	"BatchGetItem":              (*Service).batchGetItem,
	"TransactWriteItems":        (*Service).transactWriteItems,
	"TransactGetItems":          (*Service).transactGetItems,
	"DescribeEndpoints":         (*Service).describeEndpoints,
	"DescribeLimits":            (*Service).describeLimits,
}

// Handle implements awsapi.Service.
func (s *Service) Handle(req *awsapi.Request) (any, error) {
	h, ok := operations[req.Operation]
	if !ok {
		return nil, awsapi.UnknownOperationException(req.Operation)
	}
	return h(s, req)
}

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
