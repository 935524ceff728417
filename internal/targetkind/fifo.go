package targetkind

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"

	"github.com/outboxkit/terraform-provider-outbox/internal/relay/publish"
	"github.com/outboxkit/terraform-provider-outbox/outbox"
)

// FIFO targets (SQS FIFO queues, SNS FIFO topics) take two more fields per
// message: the group, whose messages are delivered in order, and the
// deduplication id, which the service uses to drop a second copy within
// five minutes. The group is the event's ordering key, or for an unordered
// event the item's partition key (its aggregate), the deduplication id its
// event id; the relay's retries of one event then
// reach consumers once.

// fifoSuffix ends the name of every FIFO queue and topic.
const fifoSuffix = ".fifo"

// isFIFO reports whether the ARN names a FIFO queue or topic.
func isFIFO(arn string) bool { return strings.HasSuffix(arn, fifoSuffix) }

// maxFIFOID is the longest MessageGroupId and MessageDeduplicationId.
const maxFIFOID = 128

// fifoID is v when SQS and SNS accept it as a group or deduplication id (1
// to 128 characters, letters, digits and ASCII punctuation), or else the
// hex SHA-256 of v, which they accept and which keeps equal values equal.
func fifoID(v string) string {
	if validFIFOID(v) {
		return v
	}
	sum := sha256.Sum256([]byte(v))
	return hex.EncodeToString(sum[:])
}

func validFIFOID(v string) bool {
	if v == "" || len(v) > maxFIFOID {
		return false
	}
	for _, c := range []byte(v) {
		if c < '!' || c > '~' {
			return false
		}
	}
	return true
}

// MessageGroupID is the group of a record's message on a FIFO target: the
// ordering key of an ordered event, or else its partition key.
func MessageGroupID(r outbox.Record) string {
	if r.OrderingKey != "" {
		return fifoID(r.OrderingKey)
	}
	return fifoID(r.PartitionKey)
}

// MessageDeduplicationID is the deduplication id of a record's message on a
// FIFO target: its event id.
func MessageDeduplicationID(r outbox.Record) string { return fifoID(r.EventID) }

// fifoLanes splits the accepted entries (index[i] is the record of entry i,
// sizes[i] its size) into lanes, every group in one lane, and each lane
// into chunks, keeping the records' order: a lane's chunks are sent one
// after the other, so one group's messages reach the target in order,
// while the lanes run in parallel. There are as many lanes as full calls
// the entries make (at most maxLanes), and a group joins the lane with the
// fewest entries when it first appears: distinct groups fill every call,
// and only a group with more events than a call holds takes more than one
// round trip.
func fifoLanes(groups []string, sizes, index []int, maxBytes, maxLanes int) [][][]int {
	if maxLanes <= 0 {
		maxLanes = publish.DefaultConcurrency
	}
	n := min(maxLanes, max(1, (len(groups)+publish.MaxBatchEntries-1)/publish.MaxBatchEntries))
	laneSizes := make([][]int, n)
	laneIndex := make([][]int, n)
	laneOf := map[string]int{}
	for i, g := range groups {
		l, ok := laneOf[g]
		if !ok {
			for k := range n {
				if len(laneIndex[k]) < len(laneIndex[l]) {
					l = k
				}
			}
			laneOf[g] = l
		}
		laneSizes[l] = append(laneSizes[l], sizes[i])
		laneIndex[l] = append(laneIndex[l], index[i])
	}
	var out [][][]int
	for l := range n {
		if len(laneIndex[l]) > 0 {
			out = append(out, publish.AcceptedChunks(laneSizes[l], laneIndex[l], maxBytes))
		}
	}
	return out
}

// FIFO reports whether s publishes to a FIFO queue or topic, which keep
// the order of each message group: the targets an ordered relay may have.
func (s Settings) FIFO() bool {
	s = s.WithDefaults()
	return (s.Type == SNS || s.Type == SQS) && isFIFO(s.Address())
}
