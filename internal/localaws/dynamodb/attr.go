package dynamodb

import (
	"bytes"
	"encoding/json"
	"slices"
	"sort"

	ddbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	mini "github.com/outboxkit/terraform-provider-outbox/third_party/minidyn/server"
)

// AttributeValue is a DynamoDB attribute value in its JSON wire shape
// ({"S":"x"}, {"N":"1"}, {"M":{…}}, …), as stream records and the Lambda
// event carry it.
type AttributeValue struct {
	B    []byte                     `json:"B,omitempty"`
	BOOL *bool                      `json:"BOOL,omitempty"`
	BS   [][]byte                   `json:"BS,omitempty"`
	L    []*AttributeValue          `json:"L,omitempty"`
	M    map[string]*AttributeValue `json:"M,omitempty"`
	N    *string                    `json:"N,omitempty"`
	NS   []*string                  `json:"NS,omitempty"`
	NULL *bool                      `json:"NULL,omitempty"`
	S    *string                    `json:"S,omitempty"`
	SS   []*string                  `json:"SS,omitempty"`
}

// MarshalJSON keeps empty lists and maps ({"L":[]}, {"M":{}}), which
// omitempty would drop.
func (a *AttributeValue) MarshalJSON() ([]byte, error) {
	type plain AttributeValue
	switch {
	case a.L != nil && len(a.L) == 0:
		return []byte(`{"L":[]}`), nil
	case a.M != nil && len(a.M) == 0:
		return []byte(`{"M":{}}`), nil
	}
	return json.Marshal((*plain)(a))
}

// Item is an item in wire shape.
type Item = map[string]*AttributeValue

type wireItem = map[string]*mini.AttributeValue

func fromWire(v *mini.AttributeValue) *AttributeValue {
	if v == nil {
		return nil
	}
	return &AttributeValue{B: v.B, BOOL: v.BOOL, BS: v.BS, N: v.N, NS: v.NS, NULL: v.NULL, S: v.S, SS: v.SS,
		L: convertList(v.L, fromWire), M: fromWireItem(v.M)}
}

func fromWireItem(m wireItem) Item { return convertMap(m, fromWire) }

func toWire(v *AttributeValue) *mini.AttributeValue {
	if v == nil {
		return nil
	}
	return &mini.AttributeValue{B: v.B, BOOL: v.BOOL, BS: v.BS, N: v.N, NS: v.NS, NULL: v.NULL, S: v.S, SS: v.SS,
		L: convertList(v.L, toWire), M: toWireItem(v.M)}
}

func toWireItem(m Item) wireItem { return convertMap(m, toWire) }

// convertList converts each element of l with convert; nil stays nil.
func convertList[A, B any](l []A, convert func(A) B) []B {
	if l == nil {
		return nil
	}
	out := make([]B, len(l))
	for i, e := range l {
		out[i] = convert(e)
	}
	return out
}

// convertMap converts each value of m with convert; nil stays nil.
func convertMap[A, B any](m map[string]A, convert func(A) B) map[string]B {
	if m == nil {
		return nil
	}
	out := make(map[string]B, len(m))
	for k, v := range m {
		out[k] = convert(v)
	}
	return out
}

// fromSDK converts an SDK attribute value (as minidyn returns in errors).
func fromSDK(v ddbtypes.AttributeValue) *AttributeValue {
	t, f := true, false
	switch x := v.(type) {
	case *ddbtypes.AttributeValueMemberS:
		return &AttributeValue{S: &x.Value}
	case *ddbtypes.AttributeValueMemberN:
		return &AttributeValue{N: &x.Value}
	case *ddbtypes.AttributeValueMemberB:
		return &AttributeValue{B: x.Value}
	case *ddbtypes.AttributeValueMemberBOOL:
		if x.Value {
			return &AttributeValue{BOOL: &t}
		}
		return &AttributeValue{BOOL: &f}
	case *ddbtypes.AttributeValueMemberNULL:
		return &AttributeValue{NULL: &t}
	case *ddbtypes.AttributeValueMemberSS:
		return &AttributeValue{SS: pointers(x.Value)}
	case *ddbtypes.AttributeValueMemberNS:
		return &AttributeValue{NS: pointers(x.Value)}
	case *ddbtypes.AttributeValueMemberBS:
		return &AttributeValue{BS: x.Value}
	case *ddbtypes.AttributeValueMemberL:
		out := &AttributeValue{L: make([]*AttributeValue, len(x.Value))}
		for i, e := range x.Value {
			out.L[i] = fromSDK(e)
		}
		return out
	case *ddbtypes.AttributeValueMemberM:
		return &AttributeValue{M: fromSDKItem(x.Value)}
	}
	return nil
}

// pointers points at each element of l (a set's members, never nil).
func pointers(l []string) []*string {
	out := make([]*string, len(l))
	for i := range l {
		out[i] = &l[i]
	}
	return out
}

func fromSDKItem(m map[string]ddbtypes.AttributeValue) Item { return convertMap(m, fromSDK) }

// sizeOf approximates DynamoDB's item size rules: attribute names plus
// value bytes (numbers about half their digits, one byte per list or map
// element, one byte for booleans and nulls).
func sizeOf(v *AttributeValue) int {
	if v == nil {
		return 0
	}
	switch {
	case v.S != nil:
		return len(*v.S)
	case v.N != nil:
		return (len(*v.N)+1)/2 + 1
	case v.B != nil:
		return len(v.B)
	case v.BOOL != nil, v.NULL != nil:
		return 1
	case v.SS != nil:
		n := 0
		for _, s := range v.SS {
			n += len(*s)
		}
		return n
	case v.NS != nil:
		n := 0
		for _, s := range v.NS {
			n += (len(*s)+1)/2 + 1
		}
		return n
	case v.BS != nil:
		n := 0
		for _, b := range v.BS {
			n += len(b)
		}
		return n
	case v.L != nil:
		n := 3
		for _, e := range v.L {
			n += 1 + sizeOf(e)
		}
		return n
	case v.M != nil:
		return 3 + itemSize(v.M)
	}
	return 0
}

func itemSize(m Item) int {
	n := 0
	for k, v := range m {
		n += len(k) + sizeOf(v)
	}
	return n
}

// equalItems reports whether two items hold the same attributes with equal
// values: a set's members in any order, a list's in the same order, as
// DynamoDB compares them when it decides whether a write changed an item.
// It compares what canonical would write, without writing it: it runs on
// every write of a table with a stream.
func equalItems(a, b Item) bool {
	if (a == nil) != (b == nil) || len(a) != len(b) {
		return false
	}
	for k, va := range a {
		vb, ok := b[k]
		if !ok || !equalValues(va, vb) {
			return false
		}
	}
	return true
}

// equalValues compares two attribute values as equalItems does.
func equalValues(a, b *AttributeValue) bool {
	if a == nil || b == nil {
		return a == b
	}
	return bytes.Equal(a.B, b.B) && equalPointers(a.BOOL, b.BOOL) && equalPointers(a.NULL, b.NULL) &&
		equalPointers(a.N, b.N) && equalPointers(a.S, b.S) &&
		equalSets(a.SS, b.SS, derefString) && equalSets(a.NS, b.NS, derefString) &&
		equalSets(a.BS, b.BS, func(v []byte) string { return string(v) }) &&
		(a.L == nil) == (b.L == nil) && slices.EqualFunc(a.L, b.L, equalValues) &&
		(a.M == nil) == (b.M == nil) && (a.M == nil || equalItems(a.M, b.M))
}

func equalPointers[T comparable](a, b *T) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}

func derefString(s *string) string { return *s }

// equalSets reports whether two sets hold the same members, in any order.
func equalSets[T any](a, b []T, member func(T) string) bool {
	if len(a) != len(b) {
		return false
	}
	if len(a) == 0 {
		return true
	}
	count := make(map[string]int, len(a))
	for _, v := range a {
		count[member(v)]++
	}
	for _, v := range b {
		k := member(v)
		if count[k] == 0 {
			return false
		}
		count[k]--
	}
	return true
}

func canonical(m Item) []byte {
	b, _ := json.Marshal(normalize(m))
	return b
}

func normalize(m Item) Item {
	out := make(Item, len(m))
	for k, v := range m {
		out[k] = normalizeValue(v)
	}
	return out
}

func normalizeValue(v *AttributeValue) *AttributeValue {
	if v == nil {
		return nil
	}
	c := *v
	sortStrings := func(in []*string) []*string {
		s := append([]*string(nil), in...)
		sort.Slice(s, func(i, j int) bool { return *s[i] < *s[j] })
		return s
	}
	if c.SS != nil {
		c.SS = sortStrings(c.SS)
	}
	if c.NS != nil {
		c.NS = sortStrings(c.NS)
	}
	if c.BS != nil {
		bs := append([][]byte(nil), c.BS...)
		sort.Slice(bs, func(i, j int) bool { return bytes.Compare(bs[i], bs[j]) < 0 })
		c.BS = bs
	}
	if c.L != nil {
		l := make([]*AttributeValue, len(c.L))
		for i, e := range c.L {
			l[i] = normalizeValue(e)
		}
		c.L = l
	}
	if c.M != nil {
		c.M = normalize(c.M)
	}
	return &c
}

// project returns the attributes of m named in keys.
func project(m Item, names []string) Item {
	out := make(Item, len(names))
	for _, n := range names {
		if v, ok := m[n]; ok {
			out[n] = v
		}
	}
	return out
}
