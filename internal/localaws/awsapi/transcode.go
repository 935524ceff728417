package awsapi

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"maps"
	"math"
	"net/url"
	"slices"
	"strconv"
	"time"

	"github.com/aws/smithy-go"
	"github.com/aws/smithy-go/encoding/cbor"
	smithytime "github.com/aws/smithy-go/time"
	"github.com/aws/smithy-go/traits"
)

// OperationShapes are the Smithy input and output schemas of one operation,
// as the aws-sdk-go-v2 service packages publish them
// (github.com/aws/aws-sdk-go-v2/service/<name>/schemas). A nil Output is
// the unit shape.
type OperationShapes struct {
	Input, Output *smithy.Schema
}

// Shapes maps operation names to their schemas. A service whose Spec has
// Shapes is transcoded by the router: it handles the JSON form of its model
// (awsJson: member names as keys, timestamps as epoch seconds, blobs as
// base64) whatever protocol the request came in, and its result is written
// in that protocol.
type Shapes map[string]OperationShapes

// transcodeRequest turns a request body of the wire protocol into the
// awsJson body of the operation's input schema.
func transcodeRequest(wire Protocol, body []byte, form url.Values, in *smithy.Schema) ([]byte, error) {
	var tree any
	switch wire {
	case Query:
		tree = queryValue(newFormIndex(form), "", in)
	case RPCv2CBOR:
		if len(body) == 0 {
			return []byte("{}"), nil
		}
		v, err := cbor.Decode(body)
		if err != nil {
			return nil, SerializationException("%s", err.Error())
		}
		tree = cborToJSON(v)
	default:
		return body, nil
	}
	if tree == nil {
		return []byte("{}"), nil
	}
	return jsonBody(tree)
}

// formIndex is an awsQuery form with every dotted prefix of its keys, so a
// structure or list is known to be present without scanning.
type formIndex struct {
	values   url.Values
	prefixes map[string]bool
}

func newFormIndex(form url.Values) formIndex {
	idx := formIndex{values: form, prefixes: map[string]bool{}}
	for k := range form {
		for i := range len(k) {
			if k[i] == '.' {
				idx.prefixes[k[:i]] = true
			}
		}
		idx.prefixes[k] = true
	}
	return idx
}

func join(prefix, name string) string {
	if prefix == "" {
		return name
	}
	return prefix + "." + name
}

func xmlName(s *smithy.Schema, fallback string) string {
	if xn, ok := smithy.SchemaTrait[*traits.XMLName](s); ok {
		return xn.Name
	}
	return fallback
}

func flattened(s *smithy.Schema) bool {
	_, ok := smithy.SchemaTrait[*traits.XMLFlattened](s)
	return ok
}

// queryValue reads the value of schema s at key from an awsQuery form, as
// smithy-go's query serializer writes it. It returns nil when absent.
func queryValue(f formIndex, key string, s *smithy.Schema) any {
	if s == nil {
		return nil
	}
	switch s.Type() {
	case smithy.ShapeTypeStructure, smithy.ShapeTypeUnion:
		if key != "" && !f.prefixes[key] {
			return nil
		}
		out := map[string]any{}
		for name, m := range s.Members() {
			if v := queryValue(f, join(key, xmlName(m, name)), m); v != nil {
				out[name] = v
			}
		}
		return out
	case smithy.ShapeTypeList, smithy.ShapeTypeSet:
		return queryList(f, key, s)
	case smithy.ShapeTypeMap:
		return queryMap(f, key, s)
	}
	if _, ok := f.values[key]; !ok {
		return nil
	}
	return scalarFromText(f.values.Get(key), s)
}

func queryList(f formIndex, key string, s *smithy.Schema) any {
	if !f.prefixes[key] {
		return nil
	}
	item := key
	if !flattened(s) {
		item = join(key, xmlName(s.ListMember(), "member"))
	}
	out := []any{}
	for i := 1; f.prefixes[item+"."+strconv.Itoa(i)]; i++ {
		if v := queryValue(f, item+"."+strconv.Itoa(i), s.ListMember()); v != nil {
			out = append(out, v)
		}
	}
	return out
}

func queryMap(f formIndex, key string, s *smithy.Schema) any {
	if !f.prefixes[key] {
		return nil
	}
	entry := key
	if !flattened(s) {
		entry = join(key, "entry")
	}
	keyName, valueName := xmlName(s.MapKey(), "key"), xmlName(s.MapValue(), "value")
	out := map[string]any{}
	for i := 1; f.prefixes[entry+"."+strconv.Itoa(i)]; i++ {
		e := entry + "." + strconv.Itoa(i)
		k := f.values.Get(e + "." + keyName)
		if v := queryValue(f, e+"."+valueName, s.MapValue()); v != nil {
			out[k] = v
		}
	}
	return out
}

// scalarFromText converts the text of an awsQuery parameter or XML element
// into its awsJson value.
func scalarFromText(text string, s *smithy.Schema) any {
	switch s.Type() {
	case smithy.ShapeTypeBoolean:
		return text == "true"
	case smithy.ShapeTypeByte, smithy.ShapeTypeShort, smithy.ShapeTypeInteger, smithy.ShapeTypeLong,
		smithy.ShapeTypeIntEnum, smithy.ShapeTypeFloat, smithy.ShapeTypeDouble, smithy.ShapeTypeBigInteger, smithy.ShapeTypeBigDecimal:
		if _, err := strconv.ParseFloat(text, 64); err != nil {
			return text
		}
		return json.Number(text)
	case smithy.ShapeTypeTimestamp:
		t, err := smithytime.ParseDateTime(text)
		if err != nil {
			if n, nerr := strconv.ParseFloat(text, 64); nerr == nil {
				return json.Number(strconv.FormatFloat(n, 'f', -1, 64))
			}
			return text
		}
		return EpochNumber(t)
	}
	return text
}

// Epoch is t as a JSON timestamp: seconds since the epoch, to the
// millisecond.
func Epoch(t time.Time) float64 { return float64(t.UnixMilli()) / 1000 }

// EpochNumber is Epoch as a JSON number, written in decimal.
func EpochNumber(t time.Time) json.Number {
	return json.Number(strconv.FormatFloat(Epoch(t), 'f', -1, 64))
}

// cborToJSON converts a decoded rpcv2Cbor value to its awsJson form:
// timestamps (tag 1) become epoch seconds and byte strings base64.
func cborToJSON(v cbor.Value) any {
	switch x := v.(type) {
	case cbor.Map:
		out := make(map[string]any, len(x))
		for k, e := range x {
			if j := cborToJSON(e); j != nil {
				out[k] = j
			}
		}
		return out
	case cbor.List:
		out := make([]any, 0, len(x))
		for _, e := range x {
			out = append(out, cborToJSON(e))
		}
		return out
	case cbor.String:
		return string(x)
	case cbor.Slice:
		return base64.StdEncoding.EncodeToString(x)
	case cbor.Uint:
		return json.Number(strconv.FormatUint(uint64(x), 10))
	case cbor.NegInt:
		return json.Number("-" + strconv.FormatUint(uint64(x), 10))
	case cbor.Float32:
		return floatNumber(float64(x))
	case cbor.Float64:
		return floatNumber(float64(x))
	case cbor.Bool:
		return bool(x)
	case *cbor.Tag:
		return cborToJSON(x.Value)
	}
	return nil
}

func floatNumber(f float64) any {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return strconv.FormatFloat(f, 'f', -1, 64)
	}
	return json.Number(strconv.FormatFloat(f, 'f', -1, 64))
}

// jsonTree re-reads a handler's result as a generic awsJson tree.
func jsonTree(v any) (any, error) {
	b, err := jsonBody(v)
	if err != nil {
		return nil, err
	}
	return decodeTree(b)
}

// decodeTree decodes JSON into a generic tree, numbers as json.Number.
func decodeTree(b []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var tree any
	if err := dec.Decode(&tree); err != nil {
		return nil, err
	}
	return tree, nil
}

// toCBORShape converts an awsJson value of schema s to CBOR: timestamps as
// tag 1, blobs as byte strings, integers and floats as the schema types
// them. Members the schema lacks are converted generically.
func toCBORShape(v any, s *smithy.Schema) cbor.Value {
	if s == nil {
		return jsonToCBOR(v)
	}
	switch x := v.(type) {
	case map[string]any:
		out := make(cbor.Map, len(x))
		for k, e := range x {
			out[k] = toCBORShape(e, memberSchema(s, k))
		}
		return out
	case []any:
		out := make(cbor.List, len(x))
		for i, e := range x {
			out[i] = toCBORShape(e, s.ListMember())
		}
		return out
	case json.Number:
		switch s.Type() {
		case smithy.ShapeTypeTimestamp:
			f, _ := x.Float64()
			return &cbor.Tag{ID: 1, Value: cbor.Float64(f)}
		case smithy.ShapeTypeFloat, smithy.ShapeTypeDouble:
			f, _ := x.Float64()
			return cbor.Float64(f)
		}
	case string:
		if s.Type() == smithy.ShapeTypeBlob {
			if b, err := base64.StdEncoding.DecodeString(x); err == nil {
				return cbor.Slice(b)
			}
		}
	}
	return jsonToCBOR(v)
}

// memberSchema is the schema of key within s: a structure member, or the
// value of a map.
func memberSchema(s *smithy.Schema, key string) *smithy.Schema {
	if s == nil {
		return nil
	}
	if s.Type() == smithy.ShapeTypeMap {
		return s.MapValue()
	}
	return s.Member(key)
}

// writeXMLShape writes the members of an awsJson structure value as XML
// elements, named and nested as smithy's awsQuery response deserializer
// reads them (xmlName, xmlFlattened, member and entry wrappers).
func writeXMLShape(buf *bytes.Buffer, v any, s *smithy.Schema) {
	m, ok := v.(map[string]any)
	if !ok {
		return
	}
	keys := slices.Sorted(maps.Keys(m))
	for _, k := range keys {
		ms := memberSchema(s, k)
		writeXMLMember(buf, xmlName(ms, k), m[k], ms)
	}
}

func writeXMLMember(buf *bytes.Buffer, name string, v any, s *smithy.Schema) {
	switch x := v.(type) {
	case []any:
		var item *smithy.Schema
		if s != nil {
			item = s.ListMember()
		}
		if s != nil && flattened(s) {
			for _, e := range x {
				writeXMLMember(buf, name, e, item)
			}
			return
		}
		open(buf, name)
		for _, e := range x {
			writeXMLMember(buf, xmlName(item, "member"), e, item)
		}
		closeTag(buf, name)
	case map[string]any:
		if s == nil || s.Type() != smithy.ShapeTypeMap {
			open(buf, name)
			writeXMLShape(buf, x, s)
			closeTag(buf, name)
			return
		}
		writeXMLMap(buf, name, x, s)
	default:
		open(buf, name)
		_ = xml.EscapeText(buf, []byte(xmlText(v, s)))
		closeTag(buf, name)
	}
}

func writeXMLMap(buf *bytes.Buffer, name string, m map[string]any, s *smithy.Schema) {
	keyName, valueName := xmlName(s.MapKey(), "key"), xmlName(s.MapValue(), "value")
	keys := slices.Sorted(maps.Keys(m))
	flat := flattened(s)
	if !flat {
		open(buf, name)
	}
	for _, k := range keys {
		entry := "entry"
		if flat {
			entry = name
		}
		open(buf, entry)
		writeXMLMember(buf, keyName, k, s.MapKey())
		writeXMLMember(buf, valueName, m[k], s.MapValue())
		closeTag(buf, entry)
	}
	if !flat {
		closeTag(buf, name)
	}
}

func open(buf *bytes.Buffer, name string)     { buf.WriteString("<" + name + ">") }
func closeTag(buf *bytes.Buffer, name string) { buf.WriteString("</" + name + ">") }

// xmlText renders an awsJson scalar as XML text: timestamps in date-time
// form, everything else as its JSON text without quotes.
func xmlText(v any, s *smithy.Schema) string {
	switch x := v.(type) {
	case string:
		return x
	case bool:
		return strconv.FormatBool(x)
	case json.Number:
		if s != nil && s.Type() == smithy.ShapeTypeTimestamp {
			f, _ := x.Float64()
			sec, frac := math.Modf(f)
			return smithytime.FormatDateTime(time.Unix(int64(sec), int64(math.Round(frac*1e3))*1e6))
		}
		return x.String()
	case nil:
		return ""
	}
	return fmt.Sprint(v)
}
