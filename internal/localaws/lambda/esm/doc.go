// Package esm serves Lambda event source mappings on DynamoDB streams and
// SQS queues for the local AWS stack: the REST-JSON operations under
// /2015-03-31/event-source-mappings (Create, Get, Update, Delete, List),
// which the lambda service delegates here, and the pollers of each enabled
// mapping, which read the source and invoke the function the way Lambda
// documents it. What differs between the two sources is a sourceKind
// (source.go): streamKind (stream_source.go, poller.go) and queueKind
// (queue_source.go); the API, validation, states, control routes and the
// invoker are shared. A mapping with MetricsConfig EventCount publishes its
// event counts (metrics.go) to CloudWatch.
//
// A stream mapping:
//
// The poller reads each shard about four times a second (Config.PollInterval),
// builds batches (BatchSize, MaximumBatchingWindowInSeconds, 6 MB payload),
// drops and checkpoints past records that match no filter of FilterCriteria,
// runs up to ParallelizationFactor batches per shard at once while keeping
// the order of each partition key, and handles failures as Lambda does:
// ReportBatchItemFailures (retry from the lowest failed sequence number),
// BisectBatchOnFunctionError, MaximumRetryAttempts, MaximumRecordAgeInSeconds
// and the on-failure destination (an SQS queue receiving the documented
// invocation record with DDBStreamBatchInfo). Records trimmed from the stream
// while the mapping was paused or disabled are skipped from the trim horizon.
//
// A stream may have several shards, and shards roll over (a shard closes
// and a child opens). The poller reads every shard it may: a shard whose
// parent is still listed waits until the parent is finished (closed, read
// to its end and every record processed), so a partition key's records stay
// in order across the rollover. Within a shard, the ParallelizationFactor
// lanes are keyed by the record's partition key.
//
// The mapping reads the stream and writes to the destination with the
// function's execution role: Create and Update check the role with the
// stack's Authorizer, and the poller checks it again as it reads and sends.
//
// A queue mapping receives batches with the queue's visibility timeout,
// deletes what the function processed, leaves the rest to the queue's
// visibility timeout and redrive policy, and honours
// ReportBatchItemFailures, batching windows and ScalingConfig.
//
// The package depends on the other services through small interfaces
// (Streams, Functions, Queues, QueueMessages, MetricSink) resolved when used, so it can be tested with
// fakes; the stack wires the real ones in wire_esm.go.
//
// Control routes (under /_localaws/):
//
//	POST /_localaws/mappings/pause   {"uuid": "…"}  stop polling, keep the state
//	POST /_localaws/mappings/resume  {"uuid": "…"}
//	GET  /_localaws/mappings/status[?uuid=…]        checkpoints, in-flight records, counters
package esm
