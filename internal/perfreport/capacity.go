package perfreport

import (
	"context"
	"sync"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	ddbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go/middleware"
)

// WriteUnits are the write request units consumed, by table, split into
// the base table and its secondary indexes.
type WriteUnits struct {
	Table, Indexes float64
	// Requests counts the write requests (API calls).
	Requests int
}

// Total is Table plus Indexes.
func (u WriteUnits) Total() float64 { return u.Table + u.Indexes }

// CapacityCounter asks DynamoDB for the consumed capacity of every write
// made through a client (ReturnConsumedCapacity INDEXES, set by an SDK
// middleware, so that the code under measurement is unchanged) and adds it
// up by table name.
type CapacityCounter struct {
	mu     sync.Mutex
	tables map[string]WriteUnits
}

// NewCapacityCounter returns an empty counter.
func NewCapacityCounter() *CapacityCounter {
	return &CapacityCounter{tables: map[string]WriteUnits{}}
}

// Reset forgets what was counted.
func (c *CapacityCounter) Reset() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.tables = map[string]WriteUnits{}
}

// Units returns what was counted for table.
func (c *CapacityCounter) Units(table string) WriteUnits {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.tables[table]
}

// Option installs the counter on a DynamoDB client:
// dynamodb.NewFromConfig(cfg, counter.Option).
func (c *CapacityCounter) Option(o *dynamodb.Options) {
	o.APIOptions = append(o.APIOptions, func(st *middleware.Stack) error {
		return st.Initialize.Add(middleware.InitializeMiddlewareFunc("CountWriteCapacity", c.handle), middleware.After)
	})
}

func (c *CapacityCounter) handle(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
	const mode = ddbtypes.ReturnConsumedCapacityIndexes
	write := true
	switch p := in.Parameters.(type) {
	case *dynamodb.PutItemInput:
		p.ReturnConsumedCapacity = mode
	case *dynamodb.UpdateItemInput:
		p.ReturnConsumedCapacity = mode
	case *dynamodb.DeleteItemInput:
		p.ReturnConsumedCapacity = mode
	case *dynamodb.BatchWriteItemInput:
		p.ReturnConsumedCapacity = mode
	case *dynamodb.TransactWriteItemsInput:
		p.ReturnConsumedCapacity = mode
	default:
		write = false
	}
	out, md, err := next.HandleInitialize(ctx, in)
	if !write || err != nil {
		return out, md, err
	}
	var ccs []ddbtypes.ConsumedCapacity
	switch r := out.Result.(type) {
	case *dynamodb.PutItemOutput:
		ccs = one(r.ConsumedCapacity)
	case *dynamodb.UpdateItemOutput:
		ccs = one(r.ConsumedCapacity)
	case *dynamodb.DeleteItemOutput:
		ccs = one(r.ConsumedCapacity)
	case *dynamodb.BatchWriteItemOutput:
		ccs = r.ConsumedCapacity
	case *dynamodb.TransactWriteItemsOutput:
		ccs = r.ConsumedCapacity
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, cc := range ccs {
		name := aws.ToString(cc.TableName)
		u := c.tables[name]
		u.Requests++
		if cc.Table != nil {
			u.Table += aws.ToFloat64(cc.Table.CapacityUnits)
		}
		for _, g := range cc.GlobalSecondaryIndexes {
			u.Indexes += aws.ToFloat64(g.CapacityUnits)
		}
		for _, l := range cc.LocalSecondaryIndexes {
			u.Indexes += aws.ToFloat64(l.CapacityUnits)
		}
		c.tables[name] = u
	}
	return out, md, err
}

func one(cc *ddbtypes.ConsumedCapacity) []ddbtypes.ConsumedCapacity {
	if cc == nil {
		return nil
	}
	return []ddbtypes.ConsumedCapacity{*cc}
}
