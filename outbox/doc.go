// Package outbox defines the outbox record contract shared by everything in
// this project: the application code that writes events, the relay that
// publishes them, the reconciler that sweeps what the stream missed and the
// Terraform provider that provisions the table, index and filter.
//
// # The problem
//
// A service that saves data in DynamoDB and then publishes an event performs
// two writes to two systems. A crash between them loses the event, or, in the
// other order, announces data that never existed. The outbox removes the gap:
// the event is stored as an item in the same TransactWriteItems call as the
// data, and a relay publishes it afterwards. Delivery is at least once, and
// every event carries its id so that consumers can deduplicate.
//
// # The item
//
// An outbox item is an ordinary DynamoDB item. Writers in any language produce
// the same attributes; this is a pending event in DynamoDB JSON, with the
// default attribute names:
//
//	{
//	  "PK":                 {"S": "ORDER#1234"},
//	  "SK":                 {"S": "OUTBOX#01M8NZ6R8V7V3B9Q2M4K8D1X6R"},
//	  "eventId":            {"S": "01M8NZ6R8V7V3B9Q2M4K8D1X6R"},
//	  "source":             {"S": "com.example.orders"},
//	  "detailType":         {"S": "OrderPlaced"},
//	  "detail":             {"S": "{\"orderId\":\"1234\",\"total\":42.5}"},
//	  "occurredAt":         {"S": "2026-11-30T10:15:00.123Z"},
//	  "status":             {"S": "PENDING"},
//	  "outboxPendingShard": {"S": "PENDING#10"},
//	  "outboxPendingSince": {"N": "1796033700123"},
//	  "outboxVersion":      {"N": "1"}
//	}
//
// The rules, for writers that do not use this package:
//
//   - The sort key is the sort-key prefix ("OUTBOX#" by default) followed by
//     the event id. The stream filter of the pipeline matches INSERT records
//     whose sort key begins with that prefix; nothing else reaches the relay.
//   - The event id is a ULID: 26 characters, time-ordered, unique. It is the
//     idempotency key that consumers deduplicate on.
//   - In a shared table the partition key is the aggregate's own partition key,
//     so the item sits next to the data it describes. In a dedicated outbox
//     table any partition key works; this package uses the sort key value.
//   - detail is the event's JSON object, stored as a string.
//   - occurredAt is UTC, RFC 3339 with milliseconds.
//   - status is PENDING when written.
//   - outboxPendingShard is "PENDING#n" with n in [0, shards). It is the
//     partition key of the sparse pending index; sharding keeps that index
//     free of hot partitions. Any uniform choice of n is valid; this package
//     uses FNV-1a (32 bit) of the event id, modulo the shard count.
//   - outboxPendingSince is occurredAt in Unix milliseconds: the sort key of
//     the pending index, which the reconciler queries for old pending events.
//   - traceHeader (optional) is an X-Ray trace header passed to EventBridge.
//   - outboxOrderingKey and outboxSequence (both or neither) make the event
//     ordered; see Ordered events.
//   - The Put is conditioned on attribute_not_exists of the partition key, so
//     an id is never written twice.
//
// Once published, the relay either deletes the item or marks it: status
// becomes PUBLISHED, publishedAt is set, the TTL attribute ("expiresAt" by
// default, Unix seconds) is set, and both pending-index attributes are
// removed, which takes the item out of the sparse index. An event that can
// never be published (malformed, too large, rejected by the target) is marked
// FAILED with attempts and lastError, and also leaves the pending index.
//
// Before the reconciler publishes an item, and before a stream invocation
// publishes one old enough for the reconciler to take, the relay holds it
// (Table.Hold): nextAttemptAt (Unix milliseconds) is set to the end of the
// hold and attempts grows by one, on the condition that the item is pending
// and not held. Of two invocations that see an event, only one publishes
// it. The hold grows with attempts, so an item whose marking keeps failing
// after it was published is tried again later each time. When publishing
// itself fails, the holder releases the item (Table.Release): nextAttemptAt
// is removed and attempts falls back by one, on the condition that the item
// is pending and still under that hold, so the event's next try is not kept
// out by a hold and is not counted. Writers never set either.
//
// # Ordered events
//
// An event that names an ordering key (Event.OrderingKey, or with
// WithOrdering its partition key) is ordered: it carries outboxOrderingKey
// and outboxSequence, its number among the events of that key, from 1,
// without gaps. The last number given out is kept in the key's sequence
// item in the same table (partition key the ordering key, sort key
// SequenceSortKey "OUTBOX-SEQ", attribute outboxSequence), which is not an
// outbox item: its sort key does not begin with the prefix and it has no
// status. Write reads the item with a strongly consistent GetItem (last),
// numbers the events of the key last+1, last+2, ... in the order given, and
// adds to the same transaction one Update of the item per key:
//
//	SET #seq = :next, #key = :key   condition  #seq = :last
//	                                (attribute_not_exists(#seq) when last is 0)
//
// When another writer advanced the key first, the condition fails, DynamoDB
// cancels the transaction and nothing is written; Write returns a
// *SequenceConflictError (errors.Is(err, ErrSequenceConflict)), and the
// caller reads its data again and retries. ActionsAfter builds the same
// actions from a last sequence the caller knows. The ordering key is 1 to
// 128 letters, digits and punctuation: it can be a FIFO message group id.
// The published metadata carries orderingKey and sequence.
//
// # Without the pending index
//
// A dedicated table whose published items are deleted can do without the
// pending index (Table.NoPendingIndex): items are written without
// outboxPendingShard and outboxPendingSince, the table holds only pending
// and failed items, and the reconciler finds old pending ones with a
// parallel Scan (Table.PendingScan).
//
// # The published event
//
// The relay publishes the event with its source and detail type. The detail
// wraps the stored object with the metadata consumers need:
//
//	{"metadata":{"eventId":"01M8NZ6R8V7V3B9Q2M4K8D1X6R","occurredAt":"2026-11-30T10:15:00.123Z"},
//	 "data":{"orderId":"1234","total":42.5}}
//
// On SNS the message body is an EventBridge-style envelope (version, id,
// source, detail-type, time, detail) so that consumers can share code.
package outbox
