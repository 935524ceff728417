package s3

import (
	"bufio"
	"bytes"
	"crypto/md5"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"hash"
	"hash/crc32"
	"hash/crc64"
	"io"
	"net/http"
	"strconv"
	"strings"

	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/awsapi"
)

// checksumAlgorithms are the x-amz-checksum-* algorithms, by their header
// suffix, each a hash of the object's bytes.
var checksumAlgorithms = map[string]func() hash.Hash{
	"crc32":     func() hash.Hash { return crc32.NewIEEE() },
	"crc32c":    func() hash.Hash { return crc32.New(crc32.MakeTable(crc32.Castagnoli)) },
	"crc64nvme": func() hash.Hash { return crc64.New(crc64NVME) },
	"sha1":      sha1.New,
	"sha256":    sha256.New,
}

// crc64NVME is CRC-64/NVME (reflected polynomial 0x9a6c9329ac4bc9b5).
var crc64NVME = crc64.MakeTable(0x9a6c9329ac4bc9b5)

func checksumOf(alg string, data []byte) string {
	h := checksumAlgorithms[alg]()
	_, _ = h.Write(data)
	return base64.StdEncoding.EncodeToString(h.Sum(nil))
}

// payload is a request body as S3 reads it: aws-chunked bodies decoded,
// with their trailing headers.
type payload struct {
	data     []byte
	trailers http.Header
	// checksumAlg and checksum are the x-amz-checksum-* algorithm and
	// value the request carried ("" when none), verified against data.
	checksumAlg, checksum string
}

// readPayload reads the request's body (decodePayload) and checks its
// Content-MD5 and checksum (verifyDigests).
func readPayload(req *awsapi.Request) (payload, error) {
	p, err := decodePayload(req)
	if err != nil {
		return payload{}, err
	}
	if p.checksumAlg, p.checksum, err = verifyDigests(req.HTTP.Header, p); err != nil {
		return payload{}, err
	}
	return p, nil
}

// decodePayload decodes the request's body: aws-chunked (signed
// STREAMING-AWS4-HMAC-SHA256-PAYLOAD, STREAMING-UNSIGNED-PAYLOAD-TRAILER and
// their trailer variants, which the SDKs send over TLS) or plain, whose
// x-amz-content-sha256, when a hash, must match.
func decodePayload(req *awsapi.Request) (payload, error) {
	h := req.HTTP.Header
	if req.HTTP.ContentLength > awsapi.MaxBodyBytes {
		return payload{}, awsapi.NewError("EntityTooLarge", "Your proposed upload exceeds the maximum allowed size")
	}
	sha := h.Get("x-amz-content-sha256")
	if strings.HasPrefix(sha, "STREAMING-") || strings.Contains(h.Get("Content-Encoding"), "aws-chunked") {
		p, err := decodeChunked(req.Body)
		if err != nil {
			return payload{}, awsapi.NewError("IncompleteBody", "%s", err.Error())
		}
		if n := h.Get("x-amz-decoded-content-length"); n != "" && n != strconv.Itoa(len(p.data)) {
			return payload{}, awsapi.NewError("IncompleteBody", "The request body terminated unexpectedly")
		}
		return p, nil
	}
	if len(sha) == 64 {
		sum := sha256.Sum256(req.Body)
		if !strings.EqualFold(hex.EncodeToString(sum[:]), sha) {
			return payload{}, awsapi.NewError("XAmzContentSHA256Mismatch", "The provided 'x-amz-content-sha256' header does not match what was computed.")
		}
	}
	return payload{data: req.Body}, nil
}

// decodeChunked decodes an aws-chunked body: chunks of "<hex size>[;chunk-
// signature=<sig>]\r\n<data>\r\n", a last chunk of size 0, then trailing
// headers ("name:value\r\n") and an empty line. Chunk signatures are not
// checked, as the stack checks no signature.
func decodeChunked(body []byte) (payload, error) {
	r := bufio.NewReader(bytes.NewReader(body))
	var data bytes.Buffer
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			return payload{}, fmt.Errorf("reading aws-chunked chunk header: %w", err)
		}
		sizeHex, _, _ := strings.Cut(strings.TrimRight(line, "\r\n"), ";")
		size, err := strconv.ParseInt(strings.TrimSpace(sizeHex), 16, 64)
		if err != nil || size < 0 {
			return payload{}, fmt.Errorf("aws-chunked chunk size %q is not hexadecimal", sizeHex)
		}
		if size == 0 {
			break
		}
		if _, err := io.CopyN(&data, r, size); err != nil {
			return payload{}, fmt.Errorf("aws-chunked chunk shorter than its size %d: %w", size, err)
		}
		if crlf, err := r.ReadString('\n'); err != nil || strings.TrimRight(crlf, "\r\n") != "" {
			return payload{}, fmt.Errorf("aws-chunked chunk not followed by CRLF")
		}
	}
	trailers := http.Header{}
	for more := true; more; {
		line, rerr := r.ReadString('\n')
		line = strings.TrimRight(line, "\r\n")
		if name, value, ok := strings.Cut(line, ":"); ok {
			trailers.Set(strings.TrimSpace(name), strings.TrimSpace(value))
		}
		more = rerr == nil && line != ""
	}
	return payload{data: data.Bytes(), trailers: trailers}, nil
}

// verifyDigests checks Content-MD5 and the x-amz-checksum-* value the
// request carries (in a header or an aws-chunked trailer) against data. It
// returns the checksum's algorithm and value ("" when none was sent).
func verifyDigests(h http.Header, p payload) (alg, value string, err error) {
	if md := h.Get("Content-MD5"); md != "" {
		want, derr := base64.StdEncoding.DecodeString(md)
		if derr != nil || len(want) != md5.Size {
			return "", "", awsapi.NewError("InvalidDigest", "The Content-MD5 you specified was invalid.")
		}
		if sum := md5.Sum(p.data); !bytes.Equal(sum[:], want) {
			return "", "", awsapi.NewError("BadDigest", "The Content-MD5 you specified did not match what we received.")
		}
	}
	for name := range checksumAlgorithms {
		header := "x-amz-checksum-" + name
		v := h.Get(header)
		if v == "" {
			v = p.trailers.Get(header)
		}
		if v == "" {
			continue
		}
		if raw, derr := base64.StdEncoding.DecodeString(v); derr != nil || len(raw) != checksumAlgorithms[name]().Size() {
			return "", "", errInvalidRequest("Value for %s header is invalid.", header)
		}
		if got := checksumOf(name, p.data); got != v {
			return "", "", awsapi.NewError("BadDigest", "The %s you specified did not match the calculated checksum.", strings.ToUpper(name))
		}
		return name, v, nil
	}
	return "", "", nil
}

// etagOf is an object's ETag: the hex MD5 of its bytes, quoted.
func etagOf(data []byte) string {
	sum := md5.Sum(data)
	return `"` + hex.EncodeToString(sum[:]) + `"`
}
