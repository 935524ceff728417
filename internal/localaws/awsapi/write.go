package awsapi

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"hash/crc32"
	"maps"
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/aws/smithy-go/encoding/cbor"
)

// WriteResult writes a handler's successful result in the service's wire
// shape.
func WriteResult(w http.ResponseWriter, spec Spec, req *Request, v any) {
	if raw, ok := v.(*Raw); ok {
		writeRaw(w, spec, req.RequestID, raw)
		return
	}
	if req.Wire != 0 && req.Wire != req.Protocol {
		writeTranscoded(w, spec, req, v)
		return
	}
	switch spec.Protocol {
	case Query:
		writeQueryResult(w, spec, req.Operation, req.RequestID, v)
	case RESTXML:
		writeRESTXMLResult(w, spec, req.RequestID, v)
	case RPCv2CBOR:
		body, err := cborBody(v)
		if err != nil {
			WriteError(w, spec, req.RequestID, InternalFailure("encoding response: %v", err))
			return
		}
		writeCBOR(w, spec, req.RequestID, body)
	default:
		body, err := jsonBody(v)
		if err != nil {
			WriteError(w, spec, req.RequestID, InternalFailure("encoding response: %v", err))
			return
		}
		h := w.Header()
		h.Set("Content-Type", jsonContentType(spec.Protocol))
		h.Set("x-amzn-RequestId", req.RequestID)
		writeBody(w, spec, http.StatusOK, body)
	}
}

// writeTranscoded writes an awsJson result v in the wire protocol of spec,
// shaped by the operation's output schema.
func writeTranscoded(w http.ResponseWriter, spec Spec, req *Request, v any) {
	out := spec.Shapes[req.Operation].Output
	tree, err := jsonTree(v)
	if err != nil {
		WriteError(w, spec, req.RequestID, InternalFailure("encoding response: %v", err))
		return
	}
	switch spec.Protocol {
	case Query:
		var buf bytes.Buffer
		writeXMLShape(&buf, tree, out)
		writeQueryResult(w, spec, req.Operation, req.RequestID, buf.Bytes())
	case RPCv2CBOR:
		writeCBOR(w, spec, req.RequestID, cbor.Encode(toCBORShape(tree, out)))
	default:
		WriteError(w, spec, req.RequestID, InternalFailure("no transcoding to %s", spec.Protocol))
	}
}

// writeCBOR writes a successful rpcv2Cbor response.
func writeCBOR(w http.ResponseWriter, spec Spec, requestID string, body []byte) {
	h := w.Header()
	h.Set("Content-Type", "application/cbor")
	h.Set("Smithy-Protocol", "rpc-v2-cbor")
	h.Set("x-amzn-RequestId", requestID)
	writeBody(w, spec, http.StatusOK, body)
}

// WriteError writes an error in the service's wire shape.
func WriteError(w http.ResponseWriter, spec Spec, requestID string, e *Error) {
	h := w.Header()
	h.Set("x-amzn-RequestId", requestID)
	switch spec.Protocol {
	case Query:
		writeQueryError(w, spec, requestID, e)
	case RESTXML:
		writeRESTXMLError(w, spec, requestID, e)
	case RESTJSON:
		typ := "Service"
		if e.Sender {
			typ = "User"
		}
		body := map[string]any{"Type": typ, "message": e.Message}
		maps.Copy(body, e.Fields)
		b, _ := jsonBody(body)
		h.Set("Content-Type", "application/json")
		h.Set("X-Amzn-ErrorType", e.Code)
		writeBody(w, spec, e.Status(), b)
	case RPCv2CBOR:
		m := cbor.Map{"__type": cbor.String(errorType(spec, e.Code)), "message": cbor.String(e.Message)}
		for k, v := range e.Fields {
			if cv, err := toCBOR(v); err == nil {
				m[k] = cv
			}
		}
		h.Set("Content-Type", "application/cbor")
		h.Set("Smithy-Protocol", "rpc-v2-cbor")
		if e.QueryCode != "" {
			h.Set("x-amzn-query-error", e.QueryCode+";"+fault(e))
		}
		writeBody(w, spec, e.Status(), cbor.Encode(m))
	default:
		body := map[string]any{"__type": errorType(spec, e.Code), "message": e.Message}
		maps.Copy(body, e.Fields)
		b, _ := jsonBody(body)
		h.Set("Content-Type", jsonContentType(spec.Protocol))
		h.Set("X-Amzn-ErrorType", e.Code)
		if e.QueryCode != "" {
			h.Set("x-amzn-query-error", e.QueryCode+";"+fault(e))
		}
		writeBody(w, spec, e.Status(), b)
	}
}

func errorType(spec Spec, code string) string {
	if spec.ErrorNamespace != "" && !strings.Contains(code, "#") {
		return spec.ErrorNamespace + "#" + code
	}
	return code
}

func fault(e *Error) string {
	if e.Sender {
		return "Sender"
	}
	return "Receiver"
}

func jsonContentType(p Protocol) string {
	switch p {
	case JSON10:
		return "application/x-amz-json-1.0"
	case JSON11:
		return "application/x-amz-json-1.1"
	}
	return "application/json"
}

func writeRaw(w http.ResponseWriter, spec Spec, requestID string, raw *Raw) {
	h := w.Header()
	maps.Copy(h, raw.Header)
	if h.Get("x-amzn-RequestId") == "" {
		h.Set("x-amzn-RequestId", requestID)
	}
	status := raw.Status
	if status == 0 {
		status = http.StatusOK
	}
	if n := raw.Header.Get("Content-Length"); n != "" && len(raw.Body) == 0 {
		// A HEAD response tells the length of the body it does not send.
		w.WriteHeader(status)
		return
	}
	writeBody(w, spec, status, raw.Body)
}

func writeBody(w http.ResponseWriter, spec Spec, status int, body []byte) {
	h := w.Header()
	if spec.CRC32 {
		h.Set("X-Amz-Crc32", strconv.FormatUint(uint64(crc32.ChecksumIEEE(body)), 10))
	}
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

// jsonBody encodes v as JSON without HTML escaping. nil gives {}; []byte and
// json.RawMessage are written as they are.
func jsonBody(v any) ([]byte, error) {
	switch b := v.(type) {
	case nil:
		return []byte("{}"), nil
	case json.RawMessage:
		return b, nil
	case []byte:
		return b, nil
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(buf.Bytes(), "\n"), nil
}

// writeQueryResult writes <OpResponse><OpResult>v</OpResult>
// <ResponseMetadata><RequestId/></ResponseMetadata></OpResponse>. v is
// encoded with encoding/xml as the content of OpResult: a struct's fields
// become child elements. A []byte or string v is inserted verbatim as
// pre-encoded XML.
func writeQueryResult(w http.ResponseWriter, spec Spec, op, requestID string, v any) {
	var buf bytes.Buffer
	buf.WriteString("<" + op + "Response")
	if spec.XMLNamespace != "" {
		buf.WriteString(` xmlns="` + spec.XMLNamespace + `"`)
	}
	buf.WriteString(">")
	switch x := v.(type) {
	case nil:
		buf.WriteString("<" + op + "Result/>")
	case []byte:
		buf.WriteString("<" + op + "Result>")
		buf.Write(x)
		buf.WriteString("</" + op + "Result>")
	case string:
		buf.WriteString("<" + op + "Result>" + x + "</" + op + "Result>")
	default:
		enc := xml.NewEncoder(&buf)
		if err := enc.EncodeElement(v, xml.StartElement{Name: xml.Name{Local: op + "Result"}}); err != nil {
			WriteError(w, spec, requestID, InternalFailure("encoding response: %v", err))
			return
		}
		_ = enc.Flush()
	}
	buf.WriteString("<ResponseMetadata><RequestId>" + requestID + "</RequestId></ResponseMetadata>")
	buf.WriteString("</" + op + "Response>")
	h := w.Header()
	h.Set("Content-Type", "text/xml")
	h.Set("x-amzn-RequestId", requestID)
	writeBody(w, spec, http.StatusOK, buf.Bytes())
}

func writeQueryError(w http.ResponseWriter, spec Spec, requestID string, e *Error) {
	var buf bytes.Buffer
	buf.WriteString("<ErrorResponse")
	if spec.XMLNamespace != "" {
		buf.WriteString(` xmlns="` + spec.XMLNamespace + `"`)
	}
	buf.WriteString("><Error><Type>" + fault(e) + "</Type><Code>")
	code := e.Code
	if e.QueryCode != "" {
		code = e.QueryCode
	}
	_ = xml.EscapeText(&buf, []byte(code))
	buf.WriteString("</Code><Message>")
	_ = xml.EscapeText(&buf, []byte(e.Message))
	buf.WriteString("</Message></Error><RequestId>" + requestID + "</RequestId></ErrorResponse>")
	w.Header().Set("Content-Type", "text/xml")
	writeBody(w, spec, e.Status(), buf.Bytes())
}

// xmlDeclaration opens restXml documents, as S3 writes them.
const xmlDeclaration = `<?xml version="1.0" encoding="UTF-8"?>` + "\n"

// writeRESTXMLResult writes a restXml result: nil is an empty 200, []byte
// is a document written as is, anything else is encoded with encoding/xml
// (its XMLName names the root element).
func writeRESTXMLResult(w http.ResponseWriter, spec Spec, requestID string, v any) {
	h := w.Header()
	h.Set("x-amz-request-id", requestID)
	var body []byte
	switch x := v.(type) {
	case nil:
	case []byte:
		body = x
	default:
		b, err := xml.Marshal(v)
		if err != nil {
			WriteError(w, spec, requestID, InternalFailure("encoding response: %v", err))
			return
		}
		body = append([]byte(xmlDeclaration), b...)
		h.Set("Content-Type", "application/xml")
	}
	writeBody(w, spec, http.StatusOK, body)
}

// writeRESTXMLError writes S3's error document: <Error> with Code, Message,
// the error's Fields as further elements (BucketName, Key) and RequestId.
func writeRESTXMLError(w http.ResponseWriter, spec Spec, requestID string, e *Error) {
	var buf bytes.Buffer
	buf.WriteString(xmlDeclaration + "<Error><Code>")
	_ = xml.EscapeText(&buf, []byte(e.Code))
	buf.WriteString("</Code><Message>")
	_ = xml.EscapeText(&buf, []byte(e.Message))
	buf.WriteString("</Message>")
	keys := slices.Sorted(maps.Keys(e.Fields))
	for _, k := range keys {
		buf.WriteString("<" + k + ">")
		_ = xml.EscapeText(&buf, []byte(fmt.Sprint(e.Fields[k])))
		buf.WriteString("</" + k + ">")
	}
	buf.WriteString("<RequestId>" + requestID + "</RequestId></Error>")
	h := w.Header()
	h.Set("Content-Type", "application/xml")
	h.Set("x-amz-request-id", requestID)
	writeBody(w, spec, e.Status(), buf.Bytes())
}

// DecodeCBOR decodes an rpcv2Cbor request body. An empty body is an empty
// map.
func (r *Request) DecodeCBOR() (cbor.Map, error) {
	if len(r.Body) == 0 {
		return cbor.Map{}, nil
	}
	v, err := cbor.Decode(r.Body)
	if err != nil {
		return nil, SerializationException("%s", err.Error())
	}
	m, ok := v.(cbor.Map)
	if !ok {
		return nil, SerializationException("request body is not a CBOR map")
	}
	return m, nil
}

func cborBody(v any) ([]byte, error) {
	if cv, ok := v.(cbor.Value); ok {
		return cbor.Encode(cv), nil
	}
	if v == nil {
		return cbor.Encode(cbor.Map{}), nil
	}
	cv, err := toCBOR(v)
	if err != nil {
		return nil, err
	}
	return cbor.Encode(cv), nil
}

// toCBOR converts a JSON-encodable value to CBOR through its JSON form.
// Timestamps become strings: return a cbor.Value to control them.
func toCBOR(v any) (cbor.Value, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	x, err := decodeTree(b)
	if err != nil {
		return nil, err
	}
	return jsonToCBOR(x), nil
}

func jsonToCBOR(x any) cbor.Value {
	switch v := x.(type) {
	case nil:
		return &cbor.Nil{}
	case bool:
		return cbor.Bool(v)
	case string:
		return cbor.String(v)
	case json.Number:
		if i, err := v.Int64(); err == nil {
			if i < 0 {
				return cbor.NegInt(uint64(-(i + 1)) + 1)
			}
			return cbor.Uint(i)
		}
		f, _ := v.Float64()
		if math.IsInf(f, 0) {
			return cbor.String(v.String())
		}
		return cbor.Float64(f)
	case []any:
		l := make(cbor.List, len(v))
		for i, e := range v {
			l[i] = jsonToCBOR(e)
		}
		return l
	case map[string]any:
		m := make(cbor.Map, len(v))
		for k, e := range v {
			m[k] = jsonToCBOR(e)
		}
		return m
	}
	return &cbor.Nil{}
}
