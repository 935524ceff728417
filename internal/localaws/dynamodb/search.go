package dynamodb

import (
	"bytes"
	"cmp"
	"hash/fnv"
	"math"
	"math/big"
	"math/bits"
	"slices"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	ddbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	mini "github.com/outboxkit/terraform-provider-outbox/third_party/minidyn/server"

	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/awsapi"
)

// maxPageBytes is the most item data one Query or Scan page reads.
const maxPageBytes = 1 << 20

// search is a Query or Scan as this layer pages it. The engine selects the
// candidates: for a Query, the items of its partition that match the key
// condition, in key order from ExclusiveStartKey's place, as many as the
// page can use (queryCandidates); for a Scan, every item of the table or
// index. Ordering, ExclusiveStartKey, Limit, the page size, the filter and
// the projection are applied here, as DynamoDB applies them: numbers
// ordered numerically and binary values bytewise, and a Scan resumed at
// the start key's position in key order, whether or not an item is still
// there.
type search struct {
	t         *table
	indexName string
	index     *index // nil for the base table
	names     map[string]string
	values    wireItem
	filter    string
	project   string
	start     wireItem
	limit     int32
	forward   bool
	count     bool // Select COUNT: no items in the output
	more      bool // the engine holds candidates after those read
}

// page is the result of a search.
type page struct {
	items     []wireItem // matched, projected
	evaluated int        // items read (ScannedCount)
	size      int        // bytes read
	last      wireItem   // LastEvaluatedKey, nil when the search is done
}

// keyAttrs returns the attributes that order a search's items: the
// index's keys (for an index), then the table's.
func (q *search) keyAttrs() []string {
	var out []string
	if q.index != nil {
		for _, k := range q.index.KeySchema {
			out = append(out, k.AttributeName)
		}
	}
	for _, k := range q.t.keySchema {
		if !slices.Contains(out, k.AttributeName) {
			out = append(out, k.AttributeName)
		}
	}
	return out
}

// run orders the candidates, resumes after q.start and reads one page.
func (q *search) run(candidates []wireItem) (*page, error) {
	attrs := q.keyAttrs()
	cmp := func(a, b wireItem) int {
		c := compareKeys(attrs, a, b)
		if !q.forward {
			return -c
		}
		return c
	}
	slices.SortStableFunc(candidates, cmp)
	if len(q.start) > 0 {
		i, _ := slices.BinarySearchFunc(candidates, q.start, func(item, start wireItem) int {
			if cmp(item, start) <= 0 {
				return -1
			}
			return 1
		})
		candidates = candidates[i:]
	}
	var filter *condition
	if q.filter != "" {
		var err error
		if filter, err = parseCondition("FilterExpression", q.filter, q.names); err != nil {
			return nil, err
		}
	}
	p := &page{}
	for i, item := range candidates {
		p.evaluated++
		p.size += itemSize(fromWireItem(item))
		ok := true
		if filter != nil {
			var err error
			if ok, err = filter.match(fromWireItem(item), fromWireItem(q.values)); err != nil {
				return nil, err
			}
		}
		if ok && !q.count {
			out := item
			if q.project != "" {
				projected, err := projectItem(q.project, q.names, item)
				if err != nil {
					return nil, err
				}
				out = projected
			}
			p.items = append(p.items, out)
		} else if ok {
			p.items = append(p.items, nil)
		}
		full := q.limit > 0 && p.evaluated == int(q.limit)
		if full || (p.size >= maxPageBytes && (i < len(candidates)-1 || q.more)) {
			p.last = wireItem{}
			for _, name := range attrs {
				p.last[name] = item[name]
			}
			break
		}
	}
	return p, nil
}

// checkStart rejects an ExclusiveStartKey that lacks a key attribute of the
// searched table or index.
func (q *search) checkStart() error {
	if len(q.start) == 0 {
		return nil
	}
	for _, name := range q.keyAttrs() {
		if q.start[name] == nil {
			return awsapi.ValidationException("The provided starting key is invalid: The provided key element does not match the schema")
		}
	}
	return nil
}

// firstQueryChunk is how many candidates a Query without a Limit asks the
// engine for first; each further request asks for twice as many, until the
// page is full or the partition read.
const firstQueryChunk = 512

// queryCandidates reads a Query's candidates from the engine in key order
// after ExclusiveStartKey, as many as its page can use: Limit items, or,
// without one, chunks of growing size until the page reaches its size
// limit. A page so costs about its own items, as on DynamoDB, however
// large the partition.
func (s *Service) queryCandidates(q *search, in *mini.QueryInput) ([]wireItem, error) {
	keyCond := aws.ToString(in.KeyConditionExpression)
	req := &mini.QueryInput{
		TableName:                 in.TableName,
		IndexName:                 in.IndexName,
		ConsistentRead:            in.ConsistentRead,
		KeyConditionExpression:    in.KeyConditionExpression,
		ExpressionAttributeNames:  used(in.ExpressionAttributeNames, keyCond),
		ExpressionAttributeValues: used(in.ExpressionAttributeValues, keyCond),
		ExclusiveStartKey:         q.start,
		ScanIndexForward:          aws.Bool(q.forward),
	}
	chunk := int32(firstQueryChunk)
	if q.limit > 0 {
		chunk = q.limit
	}
	var candidates []wireItem
	size := 0
	for {
		req.Limit = aws.Int32(chunk)
		out, err := s.engine.Query(bg, req)
		if err != nil {
			return nil, engineError(err)
		}
		candidates = append(candidates, out.Items...)
		q.more = len(out.LastEvaluatedKey) > 0
		if !q.more || q.limit > 0 {
			return candidates, nil
		}
		// Sized only to decide whether to read on: run sizes the page.
		if size += dataSize(out.Items); size >= maxPageBytes {
			return candidates, nil
		}
		req.ExclusiveStartKey, chunk = out.LastEvaluatedKey, min(2*chunk, math.MaxInt32/2)
	}
}

// dataSize is the size of items, as a page counts it.
func dataSize(items []wireItem) int {
	size := 0
	for _, item := range items {
		size += itemSize(fromWireItem(item))
	}
	return size
}

// compareKeys orders two items by the given key attributes, each compared
// by its type as DynamoDB does: numbers numerically, strings and binary
// values bytewise. A missing attribute orders first.
func compareKeys(attrs []string, a, b wireItem) int {
	for _, name := range attrs {
		if c := compareValues(a[name], b[name]); c != 0 {
			return c
		}
	}
	return 0
}

func compareValues(a, b *mini.AttributeValue) int {
	switch {
	case a == nil && b == nil:
		return 0
	case a == nil:
		return -1
	case b == nil:
		return 1
	case a.N != nil && b.N != nil:
		if c, ok := compareIntegers(*a.N, *b.N); ok {
			return c
		}
		x, okx := new(big.Rat).SetString(*a.N)
		y, oky := new(big.Rat).SetString(*b.N)
		if okx && oky {
			return x.Cmp(y)
		}
		return strings.Compare(*a.N, *b.N)
	case a.S != nil && b.S != nil:
		return strings.Compare(*a.S, *b.S)
	case a.B != nil && b.B != nil:
		return bytes.Compare(a.B, b.B)
	}
	return 0
}

// compareIntegers orders two numbers written as plain non-negative
// integers without leading zeros (timestamps, counters) by their digits,
// without parsing them; ok is false for any other form.
func compareIntegers(a, b string) (int, bool) {
	if !plainInteger(a) || !plainInteger(b) {
		return 0, false
	}
	if len(a) != len(b) {
		return cmp.Compare(len(a), len(b)), true
	}
	return strings.Compare(a, b), true
}

func plainInteger(s string) bool {
	if s == "" || (s[0] == '0' && len(s) > 1) {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// checkAttributeUsage rejects expression attribute names and values that
// no expression uses, as DynamoDB does.
func checkAttributeUsage(names map[string]string, values wireItem, exprs ...string) error {
	all := strings.TrimSpace(strings.Join(exprs, " "))
	var unusedNames, unusedValues []string
	for k := range names {
		if !strings.Contains(all, k) {
			unusedNames = append(unusedNames, k)
		}
	}
	for k := range values {
		if !strings.Contains(all, k) {
			unusedValues = append(unusedValues, k)
		}
	}
	slices.Sort(unusedNames)
	slices.Sort(unusedValues)
	switch {
	case len(unusedNames) > 0 && all == "":
		return awsapi.ValidationException("ExpressionAttributeNames can only be specified when using expressions")
	case len(unusedNames) > 0:
		return awsapi.ValidationException("Value provided in ExpressionAttributeNames unused in expressions: keys: {%s}", strings.Join(unusedNames, ", "))
	case len(unusedValues) > 0 && all == "":
		return awsapi.ValidationException("ExpressionAttributeValues can only be specified when using expressions")
	case len(unusedValues) > 0:
		return awsapi.ValidationException("Value provided in ExpressionAttributeValues unused in expressions: keys: {%s}", strings.Join(unusedValues, ", "))
	}
	return nil
}

// used returns the entries of m whose keys occur in expr.
func used[V any](m map[string]V, expr string) map[string]V {
	if len(m) == 0 {
		return nil
	}
	out := map[string]V{}
	for k, v := range m {
		if strings.Contains(expr, k) {
			out[k] = v
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

func (s *Service) query(req *awsapi.Request, in *mini.QueryInput) (any, error) {
	t, err := s.authorizedIndexLocked(req, &in.TableName, in.IndexName, "dynamodb:Query")
	if err != nil {
		return nil, err
	}
	keyCond := aws.ToString(in.KeyConditionExpression)
	if err := checkAttributeUsage(in.ExpressionAttributeNames, in.ExpressionAttributeValues,
		keyCond, aws.ToString(in.FilterExpression), aws.ToString(in.ProjectionExpression)); err != nil {
		return nil, err
	}
	q, err := newSearch(t, in.IndexName, in.ExpressionAttributeNames, in.ExpressionAttributeValues,
		in.FilterExpression, in.ProjectionExpression, in.ExclusiveStartKey, in.Limit, in.Select)
	if err != nil {
		return nil, err
	}
	q.forward = aws.ToBool(in.ScanIndexForward) || in.ScanIndexForward == nil
	candidates, err := s.queryCandidates(q, in)
	if err != nil {
		return nil, err
	}
	return q.respond(candidates, in.ConsistentRead, in.ReturnConsumedCapacity)
}

func (s *Service) scan(req *awsapi.Request, in *mini.ScanInput) (any, error) {
	t, err := s.authorizedIndexLocked(req, &in.TableName, in.IndexName, "dynamodb:Scan")
	if err != nil {
		return nil, err
	}
	if err := checkAttributeUsage(in.ExpressionAttributeNames, in.ExpressionAttributeValues,
		aws.ToString(in.FilterExpression), aws.ToString(in.ProjectionExpression)); err != nil {
		return nil, err
	}
	q, err := newSearch(t, in.IndexName, in.ExpressionAttributeNames, in.ExpressionAttributeValues,
		in.FilterExpression, in.ProjectionExpression, in.ExclusiveStartKey, in.Limit, in.Select)
	if err != nil {
		return nil, err
	}
	segment, err := scanSegment(in.Segment, in.TotalSegments)
	if err != nil {
		return nil, err
	}
	out, err := s.engine.Scan(bg, &mini.ScanInput{TableName: in.TableName, IndexName: in.IndexName, ConsistentRead: in.ConsistentRead})
	if err != nil {
		return nil, engineError(err)
	}
	return q.respond(segment.of(q.hashKey(), out.Items), in.ConsistentRead, in.ReturnConsumedCapacity)
}

// newSearch is the search of a Query or Scan of t, or of its index
// indexName, in key order (a Query sets its own), after checking its
// Limit and ExclusiveStartKey.
func newSearch(t *table, indexName *string, names map[string]string, values wireItem,
	filter, project *string, start wireItem, limit *int32, sel ddbtypes.Select) (*search, error) {
	if limit != nil && *limit < 1 {
		return nil, awsapi.ValidationException("1 validation error detected: Value '%d' at 'limit' failed to satisfy constraint: Member must have value greater than or equal to 1", *limit)
	}
	q := &search{
		t: t, indexName: aws.ToString(indexName), names: names, values: values,
		filter: aws.ToString(filter), project: aws.ToString(project),
		start: start, limit: aws.ToInt32(limit), forward: true, count: sel == "COUNT",
	}
	if q.indexName != "" {
		q.index = t.index(q.indexName)
	}
	return q, q.checkStart()
}

// respond reads one page of the candidates and renders it, with the read
// capacity the search consumed when mode asks for it.
func (q *search) respond(candidates []wireItem, consistent *bool, mode ddbtypes.ReturnConsumedCapacity) (any, error) {
	p, err := q.run(candidates)
	if err != nil {
		return nil, err
	}
	c := newConsumed()
	c.read(q.t, q.indexName, p.size, aws.ToBool(consistent), 1)
	return c.single(p.render(q.count), mode), nil
}

// hashKey is the partition key attribute of the searched table or index.
func (q *search) hashKey() string {
	return q.keyAttrs()[0]
}

// segment is one part of a parallel Scan: the items whose partition key
// hashes into the segment's share of the hash range, so that the segments
// of one TotalSegments are disjoint, cover the table, and keep each
// partition key in one segment. The zero value is the whole table.
type segment struct {
	n, total uint64
}

// maxTotalSegments is DynamoDB's limit on TotalSegments.
const maxTotalSegments = 1000000

func scanSegment(seg, total *int32) (segment, error) {
	switch {
	case seg == nil && total == nil:
		return segment{}, nil
	case total == nil:
		return segment{}, awsapi.ValidationException("The TotalSegments parameter is required but was not present in the request when Segment parameter is present")
	case seg == nil:
		return segment{}, awsapi.ValidationException("The Segment parameter is required but was not present in the request when parameter TotalSegments is present")
	case *total < 1 || *total > maxTotalSegments:
		return segment{}, awsapi.ValidationException("1 validation error detected: Value '%d' at 'totalSegments' failed to satisfy constraint: Member must have value between 1 and %d", *total, maxTotalSegments)
	case *seg < 0:
		return segment{}, awsapi.ValidationException("1 validation error detected: Value '%d' at 'segment' failed to satisfy constraint: Member must have value greater than or equal to 0", *seg)
	case *seg >= *total:
		return segment{}, awsapi.ValidationException("The Segment parameter is zero-based and must be less than parameter TotalSegments: Segment: %d is not less than TotalSegments: %d", *seg, *total)
	}
	return segment{n: uint64(*seg), total: uint64(*total)}, nil
}

// of keeps the items of the segment.
func (sg segment) of(hashKey string, items []wireItem) []wireItem {
	if sg.total <= 1 {
		return items
	}
	out := items[:0:0]
	for _, it := range items {
		if sg.holds(it[hashKey]) {
			out = append(out, it)
		}
	}
	return out
}

func (sg segment) holds(pk *mini.AttributeValue) bool {
	h := fnv.New64a()
	_, _ = h.Write(canonical(Item{"": fromWire(pk)}))
	hi, _ := bits.Mul64(h.Sum64(), sg.total)
	return hi == sg.n
}

// render is the Query/Scan output: Count and ScannedCount always present,
// as DynamoDB returns them; no Items for Select COUNT.
func (p *page) render(countOnly bool) map[string]any {
	out := map[string]any{"Count": len(p.items), "ScannedCount": p.evaluated}
	if !countOnly {
		items := make([]Item, len(p.items))
		for i, it := range p.items {
			items[i] = fromWireItem(it)
		}
		out["Items"] = items
	}
	if p.last != nil {
		out["LastEvaluatedKey"] = p.last
	}
	return out
}
