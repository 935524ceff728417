// Package dynamodb serves the DynamoDB and DynamoDB Streams APIs of the
// local AWS stack.
//
// Items, expressions, indexes and transactions are evaluated by the
// github.com/truora/minidyn engine. This layer adds what the engine lacks
// and what AWS documents: table metadata (status, ARNs, billing, tags),
// ListTables, tagging, Time to Live with a background sweeper, stream
// records on every write path, the DynamoDB Streams API, per-action
// cancellation reasons of TransactWriteItems, and top-level REMOVE in
// update expressions (the engine ignores it; here the attribute and its
// index entries go).
//
// Query and Scan page here: the engine selects the candidate items and this
// layer orders them by key as DynamoDB does (numbers numerically, strings
// and binary values bytewise, ScanIndexForward), resumes after
// ExclusiveStartKey by the key's position (whether or not its item still
// exists or is still in the index), stops at Limit or 1 MB with a
// LastEvaluatedKey, and applies the filter and the projection. Conditions
// and filters that compare operands of different types are false (<> is
// true), as on DynamoDB, where the engine raises an error.
//
// Tables record and report the controls DynamoDB has for them:
// DeletionProtectionEnabled (DeleteTable is refused with a
// ValidationException while it is on), point-in-time recovery
// (DescribeContinuousBackups, UpdateContinuousBackups, with
// RecoveryPeriodInDays and the restorable window) and server-side
// encryption (SSESpecification on CreateTable and UpdateTable, reported in
// SSEDescription with the key's ARN; none with the default AWS owned key).
// No backup is taken and nothing is encrypted.
//
// ConsumedCapacity is returned when asked for (TOTAL or INDEXES), computed
// with DynamoDB's unit rules; transactions cost double.
//
// Every operation runs under one lock, so a write and its stream records are
// atomic. A write that changes nothing (a Put of an identical item, an
// Update that sets the same values, a Delete of a missing item) writes no
// stream record.
//
// # Time to Live
//
// Each table with TTL enabled keeps an index of its items whose TTL
// attribute is a number, ordered by expiry; every write path updates it,
// and enabling TTL builds it from one scan. A sweep (every
// Options.TTLSweepInterval) reads only the expired items and deletes them
// in batches, each under the lock, so its cost follows the expired items
// and not the size of the table. As on AWS, items whose TTL attribute is
// not a number, or is more than five years in the past, are left alone.
//
// # Stream records
//
// Records have the shape DynamoDB Streams GetRecords returns (see Record):
// eventName INSERT, MODIFY or REMOVE, eventVersion "1.1", eventSource
// "aws:dynamodb", awsRegion, eventID, and dynamodb with Keys, NewImage
// and/or OldImage per the StreamViewType, SequenceNumber (fixed-width
// numeric strings, increasing across the stack, so they compare as
// strings), SizeBytes and ApproximateCreationDateTime (epoch seconds).
// Deletions by TTL carry a userIdentity of type Service and principal
// dynamodb.amazonaws.com.
//
// Records are kept for Options.StreamRetention (24 h by default). Reading
// before the trim point fails with TrimmedDataAccessException. Disabling a
// stream closes it; it stays readable until the retention passes, and
// enabling the stream again creates a new stream with a new ARN and label.
// Each stream has one shard.
//
// # In-process stream API
//
// Other packages of the stack (the Lambda event source mapping poller)
// read streams without HTTP through Service.Streams:
//
//	streams := ddb.Streams()
//	info, err := streams.Describe(streamArn)   // table, view type, status, shard, trim horizon, latest
//	table, ok := streams.TableForStream(streamArn)
//	list := streams.List(tableName)            // readable streams of a table ("" for all)
//	ch, err := streams.Changed(streamArn)      // closed on the next append or when the stream is disabled
//	recs, err := streams.Records(streamArn, afterSeq, limit)
//
// Records returns records with a sequence number greater than afterSeq
// ("" starts at the trim horizon), at most limit (1 to 1,000). It returns
// an *awsapi.Error with code TrimmedDataAccessException when records after
// afterSeq were trimmed (restart from "" to skip to the trim horizon) and
// ResourceNotFoundException once a stream is gone. To start at LATEST, use
// info.Latest as afterSeq. To wait for records without busy polling, take
// the Changed channel before calling Records and wait on it when Records
// returns nothing. A disabled stream's Changed channel is closed; when
// info.StreamStatus is DISABLED and Records returns nothing after
// info.Latest, the shard is finished.
//
// A Record marshals to the exact GetRecords JSON. Record.ForLambda returns
// the Lambda event shape: the same members plus eventSourceARN, with
// userIdentity spelled {"type":"Service","principalId":"dynamodb.amazonaws.com"}.
package dynamodb
