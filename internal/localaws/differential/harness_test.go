package differential_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/url"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/smithy-go"
)

// run is one scenario's calls against one endpoint: the responses it
// recorded, normalised, in order.
type run struct {
	ctx    context.Context
	target string // "ours" or "moto"
	cfg    aws.Config
	steps  []step
}

type step struct {
	name  string
	value any
}

// scenario is a sequence of calls, made once per endpoint. It records what
// it compares with r.rec and r.note; it never stops the test, so that both
// endpoints' transcripts are complete.
type scenario func(r *run)

// compare runs fn against the local stack and moto, concurrently, then
// compares the transcripts and decides every difference with the table.
// The scenario runs in parallel with the other tests' scenarios.
func compare(t *testing.T, name string, fn scenario) {
	t.Helper()
	t.Parallel()
	oursURL, motoURL := endpoints(t)
	ctx, cancel := context.WithTimeout(t.Context(), 90*time.Second)
	defer cancel()
	ours, moto := newRun(ctx, "ours", oursURL), newRun(ctx, "moto", motoURL)
	var wg sync.WaitGroup
	wg.Go(func() { fn(ours) })
	wg.Go(func() { fn(moto) })
	wg.Wait()
	if ctx.Err() != nil {
		t.Fatalf("scenario %s did not finish: %v", name, ctx.Err())
	}
	var diffs []difference
	for _, name := range stepUnion(ours, moto) {
		diffValues(name, ours.step(name), moto.step(name), &diffs)
	}
	decide(t, name, diffs)
}

// compareOn is compare with a client of one service, made by newClient
// (such as s3.NewFromConfig) from each run's configuration.
func compareOn[C, O any](t *testing.T, name string, newClient func(aws.Config, ...func(*O)) *C, fn func(r *run, c *C)) {
	t.Helper()
	compare(t, name, func(r *run) { fn(r, newClient(r.cfg)) })
}

func newRun(ctx context.Context, target, endpoint string) *run {
	return &run{
		ctx:    ctx,
		target: target,
		cfg: aws.Config{
			Region:       "us-east-1",
			Credentials:  credentials.NewStaticCredentialsProvider("AKIDDIFFERENTIAL", "differentialsecret", ""),
			BaseEndpoint: aws.String(endpoint),
			HTTPClient:   awshttp.NewBuildableClient(),
			Retryer:      func() aws.Retryer { return aws.NopRetryer{} },
		},
	}
}

// stepUnion lists the steps of both runs: ours in order, then moto's that
// ours lacks (a step one endpoint lacks is a difference like any other).
func stepUnion(a, b *run) []string {
	var out []string
	seen := map[string]bool{}
	for _, r := range []*run{a, b} {
		for _, s := range r.steps {
			if !seen[s.name] {
				seen[s.name] = true
				out = append(out, s.name)
			}
		}
	}
	return out
}

func (r *run) step(name string) any {
	for _, s := range r.steps {
		if s.name == name {
			return s.value
		}
	}
	return nil
}

// rec records a call's output, or its error code and HTTP status.
func (r *run) rec(name string, out any, err error) {
	if err != nil {
		r.noteTree(name, r.errorValue(err))
		return
	}
	r.note(name, out)
}

// note records any value (a response, or a summary derived from one).
func (r *run) note(name string, v any) {
	r.noteTree(name, r.tree(reflect.ValueOf(v), ""))
}

func (r *run) noteTree(name string, v any) {
	base := name
	for i := 2; r.step(name) != nil; i++ {
		name = fmt.Sprintf("%s #%d", base, i)
	}
	if v == nil {
		v = "<empty>"
	}
	r.steps = append(r.steps, step{name: name, value: v})
}

// errorValue is an error's code, HTTP status and modelled fields (such as
// CancellationReasons), without its message: messages are free text.
func (r *run) errorValue(err error) map[string]any {
	out := map[string]any{"error": "unknown"}
	var api smithy.APIError
	if errors.As(err, &api) {
		if fields, ok := r.tree(reflect.ValueOf(api), "").(map[string]any); ok {
			maps.Copy(out, fields)
		}
		delete(out, "Message")
		delete(out, "ErrorCodeOverride")
		out["error"] = api.ErrorCode()
	}
	var resp *awshttp.ResponseError
	if errors.As(err, &resp) {
		out["status"] = resp.HTTPStatusCode()
	}
	return out
}

// idFields name fields whose values are generated ids, shown as <id>.
var idFields = map[string]bool{
	"MessageId": true, "EventId": true, "EventID": true, "SequenceNumber": true,
	"StartingSequenceNumber": true, "EndingSequenceNumber": true, "ShardId": true,
	"ParentShardId": true, "ShardIterator": true, "NextShardIterator": true,
	"ReceiptHandle": true, "RequestId": true, "TableId": true, "StreamLabel": true,
	"id": true, "RoleId": true, "PolicyId": true, "NextToken": true, "nextToken": true,
	"SequenceNumberForOrdering": true, "MD5OfMessageAttributes": true, "MD5OfBody": true,
	"nextForwardToken": true, "nextBackwardToken": true, "NextForwardToken": true,
	"NextBackwardToken": true, "NextSequenceToken": true, "UploadSequenceToken": true,
	"UploadId": true,
}

// epochTimes name fields whose values are epoch times in whole seconds
// (10 digits) or milliseconds (13 digits); other forms stay as they are.
var epochTimes = map[string]bool{
	"CreatedTimestamp": true, "LastModifiedTimestamp": true, "SentTimestamp": true,
	"ApproximateFirstReceiveTimestamp": true,
	"CreationTime":                     true, "IngestionTime": true, "Timestamp": true, "FirstEventTimestamp": true,
	"LastEventTimestamp": true, "LastIngestionTime": true,
}

var (
	accountRE   = regexp.MustCompile(`\b(000000000000|123456789012)\b`)
	endpointRE  = regexp.MustCompile(`https?://(127\.0\.0\.1|localhost):\d+`)
	epochRE     = regexp.MustCompile(`^\d{10}$|^\d{13}$`)
	uuidRE      = regexp.MustCompile(`[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}`)
	timestampRE = regexp.MustCompile(`\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:?\d\d)?`)
)

// tree turns an SDK value into plain maps, lists and scalars: nil and empty
// values are dropped, union members become {"Member": value}, times become
// "<time>", and strings are normalised (see str).
func (r *run) tree(v reflect.Value, field string) any {
	if !v.IsValid() {
		return nil
	}
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if v.IsNil() {
			return nil
		}
		if v.Kind() == reflect.Interface {
			return r.union(v.Elem(), field)
		}
		return r.tree(v.Elem(), field)
	case reflect.Struct:
		return r.structTree(v)
	case reflect.Slice, reflect.Array:
		if v.Type().Elem().Kind() == reflect.Uint8 {
			if v.Len() == 0 {
				return nil
			}
			return base64.StdEncoding.EncodeToString(v.Bytes())
		}
		return r.listTree(v, field)
	case reflect.Map:
		return r.mapTree(v)
	case reflect.String:
		return r.str(v.String(), field)
	case reflect.Bool:
		return v.Bool()
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		if epochTimes[field] && v.Int() > 1e9 {
			return "<epoch>"
		}
		return v.Int()
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return int64(v.Uint())
	case reflect.Float32, reflect.Float64:
		return v.Float()
	}
	return fmt.Sprintf("<%s>", v.Type())
}

func (r *run) union(v reflect.Value, field string) any {
	name := v.Type().Name()
	if v.Kind() == reflect.Pointer {
		name = v.Type().Elem().Name()
	}
	if _, member, ok := strings.Cut(name, "Member"); ok && member != "" {
		inner := reflect.Indirect(v)
		if f := inner.FieldByName("Value"); f.IsValid() {
			v := r.tree(f, member)
			if list, ok := v.([]any); ok && (member == "SS" || member == "NS" || member == "BS") {
				// Sets have no order.
				sort.Slice(list, func(i, j int) bool { return fmt.Sprint(list[i]) < fmt.Sprint(list[j]) })
			}
			return map[string]any{member: v}
		}
	}
	return r.tree(v, field)
}

func (r *run) structTree(v reflect.Value) any {
	if t, ok := v.Interface().(time.Time); ok {
		if t.IsZero() {
			return nil
		}
		return "<time>"
	}
	out := map[string]any{}
	for i := range v.NumField() {
		f := v.Type().Field(i)
		if !f.IsExported() || f.Name == "ResultMetadata" {
			continue
		}
		if x := r.tree(v.Field(i), f.Name); x != nil {
			out[f.Name] = x
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

func (r *run) listTree(v reflect.Value, field string) any {
	if v.Len() == 0 {
		return nil
	}
	out := make([]any, v.Len())
	for i := range v.Len() {
		out[i] = r.tree(v.Index(i), field)
	}
	return out
}

func (r *run) mapTree(v reflect.Value) any {
	if v.Len() == 0 {
		return nil
	}
	keys := v.MapKeys()
	sort.Slice(keys, func(i, j int) bool { return fmt.Sprint(keys[i]) < fmt.Sprint(keys[j]) })
	out := map[string]any{}
	for _, k := range keys {
		name := fmt.Sprint(k.Interface())
		if x := r.tree(v.MapIndex(k), name); x != nil {
			out[name] = x
		}
	}
	return out
}

// str normalises a string: JSON documents (also URL-encoded ones, as IAM
// returns policies) are parsed and normalised in turn; generated ids become
// <id N>; account ids become <account>; timestamps become <time>.
func (r *run) str(s, field string) any {
	if doc, ok := jsonDocument(s); ok {
		return r.jsonTree(doc, field)
	}
	if idFields[field] && s != "" {
		return r.id(s)
	}
	if epochTimes[field] && epochRE.MatchString(s) {
		return fmt.Sprintf("<epoch %d digits>", len(s))
	}
	s = endpointRE.ReplaceAllString(s, "<endpoint>")
	s = accountRE.ReplaceAllString(s, "<account>")
	s = uuidRE.ReplaceAllStringFunc(s, r.id)
	return timestampRE.ReplaceAllString(s, "<time>")
}

// id hides a generated id. Ids are not numbered: one extra id on one side
// would renumber every later one and bury the real difference.
func (r *run) id(string) string { return "<id>" }

func jsonDocument(s string) (any, bool) {
	t := strings.TrimSpace(s)
	if strings.HasPrefix(t, "%7B") {
		if u, err := url.QueryUnescape(t); err == nil {
			t = u
		}
	}
	if !strings.HasPrefix(t, "{") && !strings.HasPrefix(t, "[") {
		return nil, false
	}
	var doc any
	if err := json.Unmarshal([]byte(t), &doc); err != nil {
		return nil, false
	}
	return doc, true
}

func (r *run) jsonTree(doc any, field string) any {
	switch d := doc.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, v := range d {
			if x := r.jsonTree(v, k); x != nil {
				out[k] = x
			}
		}
		return out
	case []any:
		out := make([]any, len(d))
		for i, v := range d {
			out[i] = r.jsonTree(v, field)
		}
		return out
	case string:
		return r.str(d, field)
	case float64:
		return d
	}
	return doc
}

// difference is one field whose normalised values differ.
type difference struct {
	path       string // step/field.path
	ours, moto any    // nil when absent
}

func (d difference) String() string {
	return fmt.Sprintf("%s: ours %s, moto %s", d.path, show(d.ours), show(d.moto))
}

func show(v any) string {
	if v == nil {
		return "<absent>"
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	if len(b) > 300 {
		return string(b[:300]) + "…"
	}
	return string(b)
}

func diffValues(path string, a, b any, out *[]difference) {
	am, aok := a.(map[string]any)
	bm, bok := b.(map[string]any)
	if aok && bok {
		keys := slices.AppendSeq(slices.Collect(maps.Keys(am)), maps.Keys(bm))
		slices.Sort(keys)
		for _, k := range slices.Compact(keys) {
			diffValues(joinPath(path, k), am[k], bm[k], out)
		}
		return
	}
	al, aok := a.([]any)
	bl, bok := b.([]any)
	if aok && bok {
		for i := range max(len(al), len(bl)) {
			var x, y any
			if i < len(al) {
				x = al[i]
			}
			if i < len(bl) {
				y = bl[i]
			}
			diffValues(fmt.Sprintf("%s[%d]", path, i), x, y, out)
		}
		return
	}
	if !reflect.DeepEqual(normNumber(a), normNumber(b)) {
		*out = append(*out, difference{path: path, ours: a, moto: b})
	}
}

func joinPath(path, key string) string {
	if !strings.Contains(path, "/") {
		return path + "/" + key
	}
	return path + "." + key
}

func normNumber(v any) any {
	if i, ok := v.(int64); ok {
		return float64(i)
	}
	return v
}
