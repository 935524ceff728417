package conformance

import "github.com/aws/aws-lambda-go/events"

// Received is one stream record as the test function saw it.
type Received struct {
	Seq          string                       `json:"seq"`
	EventName    string                       `json:"eventName"`
	PK           string                       `json:"pk"`
	SK           string                       `json:"sk"`
	UserIdentity *events.DynamoDBUserIdentity `json:"userIdentity,omitempty"`
}

// Report is the message the test function sends to RECORD_QUEUE_URL when
// an invocation starts (Phase "start") and when it returns (Phase "done").
type Report struct {
	Phase     string     `json:"phase"`
	RequestID string     `json:"requestId"`
	PID       int        `json:"pid"`
	AtNanos   int64      `json:"atNanos"`
	Records   []Received `json:"records"`
	Failed    []string   `json:"failed,omitempty"`
}

// Seqs lists the sequence numbers of the report's records.
func (r Report) Seqs() []string {
	out := make([]string, len(r.Records))
	for i, rc := range r.Records {
		out[i] = rc.Seq
	}
	return out
}

// Items lists the report's records as "EVENT pk/sk".
func (r Report) Items() []string {
	out := make([]string, len(r.Records))
	for i, rc := range r.Records {
		out[i] = rc.EventName + " " + rc.PK + "/" + rc.SK
	}
	return out
}
