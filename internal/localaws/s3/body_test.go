package s3

import (
	"testing"
)

// TestDecodeChunked decodes the aws-chunked forms: signed chunks
// (STREAMING-AWS4-HMAC-SHA256-PAYLOAD) and unsigned chunks with a trailing
// checksum (STREAMING-UNSIGNED-PAYLOAD-TRAILER).
func TestDecodeChunked(t *testing.T) {
	t.Parallel()
	signed := "5;chunk-signature=aaaa\r\nhello\r\n6;chunk-signature=bbbb\r\n world\r\n0;chunk-signature=cccc\r\n\r\n"
	p, err := decodeChunked([]byte(signed))
	if err != nil || string(p.data) != "hello world" {
		t.Fatalf("signed: %q, %v", p.data, err)
	}
	trailer := "b\r\nhello world\r\n0\r\nx-amz-checksum-crc32:DUoRhQ==\r\nx-amz-trailer-signature:dddd\r\n\r\n"
	p, err = decodeChunked([]byte(trailer))
	if err != nil || string(p.data) != "hello world" || p.trailers.Get("x-amz-checksum-crc32") != "DUoRhQ==" {
		t.Fatalf("trailer: %q %v, %v", p.data, p.trailers, err)
	}
	if alg, _, err := verifyDigests(nil, p); err != nil || alg != "crc32" {
		t.Fatalf("the trailing CRC32 of %q: %q, %v", p.data, alg, err)
	}
	for _, bad := range []string{"zz\r\nhello\r\n0\r\n\r\n", "a\r\nhello\r\n0\r\n\r\n", "5\r\nhelloXX0\r\n\r\n"} {
		if _, err := decodeChunked([]byte(bad)); err == nil {
			t.Errorf("decodeChunked(%q) succeeded", bad)
		}
	}
}
