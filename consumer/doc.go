// Package consumer is the consumer kit of the outbox: it applies each
// published event once, although subscriptions deliver at least once.
//
// An Inbox is a DynamoDB table with one item per event id (the inbox
// contract, docs/guides/inbox-contract.md). Before a handler runs, a
// conditional put marks the event IN_PROGRESS with a lease that expires;
// the put succeeds only if the event is new, or if an earlier attempt's
// lease expired before it completed (a crashed handler), which is a lease
// takeover. When the handler returns, the entry becomes COMPLETED with a TTL,
// and later deliveries of the event are skipped as duplicates.
//
// The entry stores the SHA-256 of the event's data (PayloadHash). An event
// id delivered again with other data is an error (ErrPayloadMismatch), never
// a skipped duplicate: it is checked on every path, for a duplicate of a
// completed event, of one in progress, and before a takeover, from the entry
// that the failed put returns (ReturnValuesOnConditionCheckFailure ALL_OLD).
//
// # What "once" means
//
// A handler whose side effects are DynamoDB writes adds them to the Tx it is
// given. The kit commits them in the one TransactWriteItems that completes
// the inbox entry, conditioned on the lease token of this attempt: the
// effects and the completion happen together or not at all, and an attempt
// whose lease was taken over commits nothing (ErrLeaseLost). Those effects
// happen exactly once.
//
// A handler whose only side effects are those writes needs no lease: with
// EffectsOnly (Inbox.ProcessEffectsOnly) the handler runs first, and one
// TransactWriteItems puts the entry already COMPLETED with its writes, in
// one round trip. Two concurrent deliveries may both run the handler; only
// one transaction commits, and the other learns from the stored entry that
// the cancellation returns whether it was a duplicate or a payload
// mismatch.
//
// Any other side effect (an HTTP call, an email, a payment API) happens at
// least once: the lease keeps a second attempt from starting while the first
// is alive, and completion ends all further attempts, but an attempt that
// performs the effect and then crashes (or loses its lease) before the
// completion is followed by another attempt, after the lease, that performs
// it again. Pass the event id to such services as their idempotency key;
// the window for a repeat is the lease plus the time to complete.
//
// # The lease and the queue
//
// One rule: the function's timeout < the lease (WithLease, DefaultLease)
// < (maxReceiveCount - 1) x the queue's visibility timeout. Longer than the
// timeout, no attempt still alive is taken over. A message whose event
// another attempt holds is reported failed and comes back one visibility
// timeout later, maxReceiveCount receives in all, the last one
// maxReceiveCount - 1 visibility timeouts after the first: a lease that
// ends before it lets that receive take a crashed attempt's event over
// before SQS moves the message to the dead-letter queue. Leases compare
// the consumers' clocks.
//
// # Adapters
//
// Consumer[T] unwraps what subscriptions deliver to a Lambda function and
// calls a Handler with a typed Event[T]: SQS events (HandleSQS, with partial
// batch responses, a batch's messages applied concurrently, WithConcurrency;
// on a FIFO queue its message groups concurrently, each in order, and a
// failure stops its message group), whose
// body is an EventBridge event (a rule's target), an SNS notification or an
// SNS raw message; and direct EventBridge events (HandleEventBridge).
//
// A message with a MessageGroupId is taken as a FIFO queue's when its
// eventSourceARN ends in ".fifo", or is empty (HandleSQS says why).
//
// Counts of applied events, duplicates skipped, leases taken over and lost,
// and payload mismatches are written as CloudWatch embedded metric format
// lines after each invocation, and decisions are logged with log/slog JSON.
// A payload mismatch logs two records: the inbox's ERROR "payload mismatch"
// (eventId, status: the stored entry's, storedHash, deliveredHash), then
// the adapter's WARN "delivery failed" (deliveryId: the SQS message id or
// the EventBridge event id; error: the PayloadMismatchError's text).
//
// The module requires only the AWS SDK's DynamoDB client and aws-lambda-go's
// event types.
package consumer
