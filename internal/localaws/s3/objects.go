package s3

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/awsapi"
)

// object is one stored object.
type object struct {
	key      string
	data     []byte
	etag     string
	modified time.Time
	// header are the representation headers stored with the object
	// (Content-Type, Content-Encoding, Cache-Control, x-amz-meta-*, ...).
	header       http.Header
	tags         map[string]string
	storageClass string
	sse          sseSettings
	checksumAlg  string // x-amz-checksum-<alg>, "" when none was sent
	checksum     string
}

// sseSettings are an object's server-side encryption.
type sseSettings struct {
	algorithm string // AES256, aws:kms, aws:kms:dsse
	kmsKeyID  string
	bucketKey bool
}

// storedHeaders are the request headers PutObject keeps and GetObject and
// HeadObject return.
var storedHeaders = []string{"Content-Type", "Content-Encoding", "Content-Disposition", "Content-Language", "Cache-Control", "Expires"}

func (s *Service) putObject(req *awsapi.Request) (any, error) {
	key := objectKey(req)
	p, err := readPayload(req)
	if err != nil {
		return nil, err
	}
	h := req.HTTP.Header
	return s.withNewObject(req, key, p.data, func(b *bucket, o *object) (any, error) {
		if err := writePreconditions(h, key, b.objects[key]); err != nil {
			return nil, err
		}
		o.checksumAlg, o.checksum = p.checksumAlg, p.checksum
		b.objects[key] = o
		out := s3Header(req, http.Header{"ETag": {o.etag}})
		o.sse.write(out)
		if o.checksumAlg != "" {
			out.Set("x-amz-checksum-"+o.checksumAlg, o.checksum)
			out.Set("x-amz-checksum-type", "FULL_OBJECT")
		}
		s.writeExpiration(out, b, o)
		return &awsapi.Raw{Header: out}, nil
	})
}

// withNewObject runs fn, in the request's bucket and under s3:PutObject,
// with the object a write of data to key makes: the request's headers,
// tags (x-amz-tagging) and encryption, as PutObject and
// CreateMultipartUpload take them.
func (s *Service) withNewObject(req *awsapi.Request, key string, data []byte, fn func(b *bucket, o *object) (any, error)) (any, error) {
	h := req.HTTP.Header
	tags, err := headerTags(h.Get("x-amz-tagging"))
	if err != nil {
		return nil, err
	}
	return s.withBucket(req, "s3:PutObject", key, func(b *bucket) (any, error) {
		sse, err := s.objectSSE(h, b)
		if err != nil {
			return nil, err
		}
		o := newObject(key, h, data, s.env.Time().UTC())
		o.tags, o.sse = tags, sse
		return fn(b, o)
	})
}

// withObject runs fn, in the request's bucket and under action, with the
// request's object: NoSuchKey when there is none.
func (s *Service) withObject(req *awsapi.Request, action string, fn func(b *bucket, o *object) (any, error)) (any, error) {
	key := objectKey(req)
	return s.withBucket(req, action, key, func(b *bucket) (any, error) {
		o, ok := b.objects[key]
		if !ok {
			return nil, errNoSuchKey(key)
		}
		return fn(b, o)
	})
}

// newObject is an object of data with the representation headers,
// metadata and storage class of request headers h.
func newObject(key string, h http.Header, data []byte, now time.Time) *object {
	o := &object{key: key, data: data, etag: etagOf(data), modified: now, header: http.Header{}, storageClass: h.Get("x-amz-storage-class")}
	for _, name := range storedHeaders {
		if v := h.Get(name); v != "" {
			o.header.Set(name, v)
		}
	}
	if ce := contentEncoding(h.Get("Content-Encoding")); ce != "" {
		o.header.Set("Content-Encoding", ce)
	} else {
		o.header.Del("Content-Encoding")
	}
	if o.header.Get("Content-Type") == "" {
		o.header.Set("Content-Type", "binary/octet-stream")
	}
	for name, vs := range h {
		if strings.HasPrefix(strings.ToLower(name), "x-amz-meta-") {
			o.header[name] = vs
		}
	}
	return o
}

// contentEncoding is Content-Encoding without aws-chunked, which only
// describes the request's transfer.
func contentEncoding(v string) string {
	var keep []string
	for _, e := range strings.Split(v, ",") {
		if e = strings.TrimSpace(e); e != "" && e != "aws-chunked" {
			keep = append(keep, e)
		}
	}
	return strings.Join(keep, ",")
}

// objectSSE is the encryption of a new object: the request's headers, or
// the bucket's default encryption.
func (s *Service) objectSSE(h http.Header, b *bucket) (sseSettings, error) {
	alg, key := h.Get("x-amz-server-side-encryption"), h.Get("x-amz-server-side-encryption-aws-kms-key-id")
	bucketKey := strings.EqualFold(h.Get("x-amz-server-side-encryption-bucket-key-enabled"), "true")
	if alg == "" {
		if key != "" {
			return sseSettings{}, errInvalidArgument("Server Side Encryption with AWS KMS managed key requires HTTP header x-amz-server-side-encryption : aws:kms")
		}
		d := b.defaultEncryption()
		return sseSettings{algorithm: d.SSEAlgorithm, kmsKeyID: s.kmsKeyARN(d.KMSMasterKeyID, d.SSEAlgorithm), bucketKey: d.bucketKey}, nil
	}
	switch alg {
	case "AES256":
		if key != "" {
			return sseSettings{}, errInvalidArgument("Server Side Encryption with AWS KMS managed key requires HTTP header x-amz-server-side-encryption : aws:kms")
		}
		return sseSettings{algorithm: alg}, nil
	case "aws:kms", "aws:kms:dsse":
		return sseSettings{algorithm: alg, kmsKeyID: s.kmsKeyARN(key, alg), bucketKey: bucketKey}, nil
	}
	return sseSettings{}, errInvalidArgument("The encryption method specified is not supported")
}

// kmsKeyARN is the ARN S3 reports for an SSE-KMS key: a key id or alias
// as an ARN of the stack's Region and account, and with no key the AWS
// managed key of S3 (alias/aws/s3).
func (s *Service) kmsKeyARN(key, alg string) string {
	switch {
	case !strings.HasPrefix(alg, "aws:kms"):
		return ""
	case strings.HasPrefix(key, "arn:"):
		return key
	case key == "":
		return s.env.ARN("kms", "alias/aws/s3")
	case strings.HasPrefix(key, "alias/"):
		return s.env.ARN("kms", key)
	}
	return s.env.ARN("kms", "key/"+key)
}

func (e sseSettings) write(h http.Header) {
	if e.algorithm == "" {
		return
	}
	h.Set("x-amz-server-side-encryption", e.algorithm)
	if e.kmsKeyID != "" {
		h.Set("x-amz-server-side-encryption-aws-kms-key-id", e.kmsKeyID)
	}
	if e.bucketKey {
		h.Set("x-amz-server-side-encryption-bucket-key-enabled", "true")
	}
}

func (s *Service) getObject(req *awsapi.Request) (any, error) { return s.readObject(req, true) }

func (s *Service) headObject(req *awsapi.Request) (any, error) { return s.readObject(req, false) }

// readObject serves GetObject (withBody) and HeadObject: the object's
// headers, its conditional requests and, for GetObject, a Range.
func (s *Service) readObject(req *awsapi.Request, withBody bool) (any, error) {
	return s.withObject(req, "s3:GetObject", func(b *bucket, o *object) (any, error) {
		h := s3Header(req, o.header.Clone())
		h.Set("ETag", o.etag)
		h.Set("Last-Modified", httpTime(o.modified))
		h.Set("Accept-Ranges", "bytes")
		o.sse.write(h)
		if len(o.tags) > 0 {
			h.Set("x-amz-tagging-count", strconv.Itoa(len(o.tags)))
		}
		if o.storageClass != "" && o.storageClass != "STANDARD" {
			h.Set("x-amz-storage-class", o.storageClass)
		}
		s.writeExpiration(h, b, o)
		if status := preconditions(req.HTTP.Header, o); status != 0 {
			if status == http.StatusPreconditionFailed {
				return nil, awsapi.NewError("PreconditionFailed", "At least one of the pre-conditions you specified did not hold").WithStatus(status)
			}
			return &awsapi.Raw{Status: status, Header: h}, nil
		}
		size := int64(len(o.data))
		start, end, ranged, err := byteRange(req.HTTP.Header.Get("Range"), size)
		if err != nil {
			return nil, err
		}
		if !ranged && o.checksumAlg != "" && strings.EqualFold(req.HTTP.Header.Get("x-amz-checksum-mode"), "ENABLED") {
			h.Set("x-amz-checksum-"+o.checksumAlg, o.checksum)
			h.Set("x-amz-checksum-type", "FULL_OBJECT")
		}
		status := http.StatusOK
		if ranged {
			status = http.StatusPartialContent
			h.Set("Content-Range", "bytes "+strconv.FormatInt(start, 10)+"-"+strconv.FormatInt(end, 10)+"/"+strconv.FormatInt(size, 10))
		}
		h.Set("Content-Length", strconv.FormatInt(end-start+1, 10))
		if !withBody {
			return &awsapi.Raw{Status: status, Header: h}, nil
		}
		return &awsapi.Raw{Status: status, Header: h, Body: o.data[start : end+1]}, nil
	})
}

// preconditions applies If-Match and If-None-Match: 412, 304 or 0 (serve).
func preconditions(h http.Header, o *object) int {
	if m := h.Get("If-Match"); m != "" && !etagMatches(m, o.etag) {
		return http.StatusPreconditionFailed
	}
	if m := h.Get("If-None-Match"); m != "" && etagMatches(m, o.etag) {
		return http.StatusNotModified
	}
	return 0
}

// writePreconditions applies the conditional writes of PutObject:
// If-None-Match "*" refuses to overwrite an object, If-Match requires the
// current object to have that ETag (and an object: 404 without one).
func writePreconditions(h http.Header, key string, current *object) error {
	failed := awsapi.NewError("PreconditionFailed", "At least one of the pre-conditions you specified did not hold").WithStatus(http.StatusPreconditionFailed)
	if h.Get("If-None-Match") == "*" && current != nil {
		return failed
	}
	if m := h.Get("If-Match"); m != "" {
		if current == nil {
			return errNoSuchKey(key)
		}
		if !etagMatches(m, current.etag) {
			return failed
		}
	}
	return nil
}

func etagMatches(list, etag string) bool {
	for _, e := range strings.Split(list, ",") {
		e = strings.TrimSpace(e)
		if e == "*" || e == etag || `"`+e+`"` == etag {
			return true
		}
	}
	return false
}

// byteRange parses a single-range Range header ("bytes=0-99", "bytes=100-",
// "bytes=-100") against size: [start, end] inclusive. A header that does not
// parse is ignored, as RFC 9110 has it; a range past the end is InvalidRange
// (416).
func byteRange(v string, size int64) (start, end int64, ranged bool, err error) {
	whole := func() (int64, int64, bool, error) { return 0, size - 1, false, nil }
	spec, ok := strings.CutPrefix(v, "bytes=")
	if !ok || strings.Contains(spec, ",") {
		return whole()
	}
	first, last, ok := strings.Cut(strings.TrimSpace(spec), "-")
	if !ok {
		return whole()
	}
	if first == "" {
		n, ok := nonNegative(last)
		switch {
		case !ok || n == 0:
			return whole()
		case size == 0:
			return 0, 0, false, errInvalidRange(size)
		}
		return max(size-n, 0), size - 1, true, nil
	}
	start, ok = nonNegative(first)
	if !ok {
		return whole()
	}
	end = size - 1
	if last != "" {
		e, ok := nonNegative(last)
		if !ok || e < start {
			return whole()
		}
		end = min(e, size-1)
	}
	if start >= size {
		return 0, 0, false, errInvalidRange(size)
	}
	return start, end, true, nil
}

// nonNegative parses a decimal byte position.
func nonNegative(s string) (int64, bool) {
	n, err := strconv.ParseInt(s, 10, 64)
	return n, err == nil && n >= 0
}

func errInvalidRange(size int64) *awsapi.Error {
	return awsapi.NewError("InvalidRange", "The requested range is not satisfiable").WithStatus(http.StatusRequestedRangeNotSatisfiable).
		With("ActualObjectSize", size).With("RangeRequested", "")
}

func (s *Service) deleteObject(req *awsapi.Request) (any, error) {
	key := objectKey(req)
	return s.withBucket(req, "s3:DeleteObject", key, func(b *bucket) (any, error) {
		delete(b.objects, key)
		return noContent(req), nil
	})
}

// headerTags parses the x-amz-tagging header (URL query form).
func headerTags(v string) (map[string]string, error) {
	if v == "" {
		return nil, nil
	}
	q, err := url.ParseQuery(v)
	if err != nil {
		return nil, awsapi.NewError("InvalidArgument", "The header 'x-amz-tagging' shall be encoded as UTF-8 then URLEncoded URL query parameters without tag name duplicates.")
	}
	var tags []tag
	for k, vs := range q {
		if len(vs) > 1 {
			return nil, awsapi.NewError("InvalidTag", "Cannot provide multiple Tags with the same key")
		}
		tags = append(tags, tag{Key: k, Value: vs[0]})
	}
	return checkTags(tags, maxObjectTags)
}
