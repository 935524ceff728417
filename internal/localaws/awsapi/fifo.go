package awsapi

import (
	"crypto/sha256"
	"encoding/hex"
	"regexp"
	"strconv"
	"time"
)

// What SQS FIFO queues and SNS FIFO topics share.

// DeduplicationWindow is the deduplication interval of SQS FIFO queues
// and SNS FIFO topics: five minutes.
const DeduplicationWindow = 5 * time.Minute

// FIFOTokenRE matches a MessageGroupId, MessageDeduplicationId or
// ReceiveRequestAttemptId: 1 to 128 alphanumeric or punctuation characters.
var FIFOTokenRE = regexp.MustCompile("^[A-Za-z0-9!\"#$%&'()*+,\\-./:;<=>?@\\[\\\\\\]^_`{|}~]{1,128}$")

// sequenceBase makes sequence numbers 20 digits long, as AWS's are.
const sequenceBase uint64 = 10_000_000_000_000_000_000

// SequenceNumber is the n-th sequence number of a FIFO queue or topic: a
// 20-digit decimal that grows with n.
func SequenceNumber(n uint64) string { return strconv.FormatUint(sequenceBase+n, 10) }

// ContentDeduplicationID is the deduplication id of a message body under
// ContentBasedDeduplication: the hex SHA-256 of the body.
func ContentDeduplicationID(body string) string {
	sum := sha256.Sum256([]byte(body))
	return hex.EncodeToString(sum[:])
}
