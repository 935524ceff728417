// Package s3 is Amazon S3 (restXml, signing name "s3") for the local AWS
// stack: general purpose buckets and their objects, as the SDKs call them.
//
// Buckets: CreateBucket (with AWS's LocationConstraint rules), HeadBucket,
// DeleteBucket, ListBuckets, GetBucketLocation, bucket tagging, lifecycle
// configuration, bucket policy, public access block and default encryption.
// Objects: PutObject (single part, aws-chunked bodies decoded, Content-MD5
// and x-amz-checksum-* verified), GetObject (with Range), HeadObject,
// DeleteObject, DeleteObjects, ListObjectsV2, object tagging and multipart
// upload (CreateMultipartUpload, UploadPart, CompleteMultipartUpload,
// AbortMultipartUpload; parts of at least 5 MiB but the last, ETag
// "<md5 of the parts' md5s>-<parts>").
//
// Addressing: path-style (http://127.0.0.1:4566/bucket/key, which the Go
// SDK uses for an IP endpoint) and virtual-hosted style, where the Host
// names the bucket: bucket.localhost[:port], bucket.s3.<region>.amazonaws.com,
// bucket.s3.amazonaws.com or bucket.s3.<anything>. Other hosts are
// path-style.
//
// Lifecycle expiration runs in a background sweep on the stack's clock
// (Options.LifecycleSweepInterval); SweepLifecycle runs one now. Objects
// expire, as AWS computes it, at the midnight UTC that follows their
// creation time plus the rule's Days (or at the rule's Date); incomplete
// multipart uploads are aborted by AbortIncompleteMultipartUpload.
//
// Bucket policies are evaluated by the stack's IAM policy evaluator for
// every request on the bucket and its objects: an explicit Deny refuses the
// request (AccessDenied); otherwise the caller's identity policies decide
// (Request.AuthorizeContext), their conditions tested on the same keys. aws:SecureTransport is "true" for requests received
// over TLS and, since the stack's plain-HTTP listener stands in for AWS's
// HTTPS endpoints, for plain-HTTP requests too, unless they carry
// X-Forwarded-Proto: http, the proxy header of a request first made over
// plain HTTP: tests send it to see a TLS-only policy refuse a request.
//
// Known differences from AWS: no versioning, CopyObject, UploadPartCopy,
// ListParts, ListMultipartUploads, ACLs, presigned URLs or ListObjects
// (version 1); a multipart object keeps no checksum of its own; SSE-KMS is
// recorded and echoed (no KMS service checks the key); request bodies are
// limited to the router's 64 MiB (EntityTooLarge above); the sweep runs
// every LifecycleSweepInterval rather than once a day.
package s3

import (
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/awsapi"
)

// ServiceName is the Spec.Name of the service.
const ServiceName = "s3"

// xmlns is the namespace of S3's XML documents.
const xmlns = "http://s3.amazonaws.com/doc/2006-03-01/"

// DefaultLifecycleSweepInterval is how often lifecycle rules are applied
// when Options leave it unset.
const DefaultLifecycleSweepInterval = time.Second

// Options configure the service. The zero value is usable.
type Options struct {
	// LifecycleSweepInterval is how often expired objects are deleted by
	// the buckets' lifecycle rules; default 1s (AWS runs once a day).
	// Negative: never in the background (tests call SweepLifecycle).
	LifecycleSweepInterval time.Duration
}

// Service is the S3 service.
type Service struct {
	*awsapi.Lifecycle
	routes *awsapi.Routes
	env    *awsapi.Env
	opts   Options

	mu      sync.Mutex
	buckets map[string]*bucket
}

var (
	_ awsapi.Service           = (*Service)(nil)
	_ awsapi.OperationResolver = (*Service)(nil)
	_ awsapi.Inventory         = (*Service)(nil)
	_ awsapi.Closer            = (*Service)(nil)
)

// New returns the service, its lifecycle sweep started.
func New(env *awsapi.Env, opts Options) *Service {
	if opts.LifecycleSweepInterval == 0 {
		opts.LifecycleSweepInterval = DefaultLifecycleSweepInterval
	}
	s := &Service{Lifecycle: awsapi.NewLifecycle(), env: env, opts: opts, buckets: map[string]*bucket{}}
	s.routes = awsapi.NewRoutes(s.operations())
	s.Lists(&s.mu, func(add func(string)) {
		for name := range s.buckets {
			add(bucketArn(name))
		}
	})
	if opts.LifecycleSweepInterval > 0 {
		s.Go(s.sweepLoop)
	}
	return s
}

// Spec implements awsapi.Service.
func (s *Service) Spec() awsapi.Spec {
	return awsapi.Spec{Name: ServiceName, Protocol: awsapi.RESTXML, SigningName: "s3"}
}

// ResolveOperation implements awsapi.OperationResolver.
func (s *Service) ResolveOperation(r *http.Request) string {
	return s.routes.ResolveOperation(pathStyle(r))
}

// Handle implements awsapi.Service: a virtual-hosted request is served as
// its path-style form.
func (s *Service) Handle(req *awsapi.Request) (any, error) {
	if req.HTTP != nil {
		req.HTTP = pathStyle(req.HTTP)
	}
	return s.routes.Handle(req)
}

func (s *Service) operations() awsapi.Operations {
	return awsapi.Operations{
		"ListBuckets":                     {Route: "GET /", Handle: s.listBuckets},
		"CreateBucket":                    {Route: "PUT /{Bucket}", Handle: s.createBucket},
		"HeadBucket":                      {Route: "HEAD /{Bucket}", Handle: s.headBucket},
		"DeleteBucket":                    {Route: "DELETE /{Bucket}", Handle: s.deleteBucket},
		"GetBucketLocation":               {Route: "GET /{Bucket}?location", Handle: s.getBucketLocation},
		"ListObjectsV2":                   {Route: "GET /{Bucket}?list-type=2", Handle: s.listObjectsV2},
		"PutBucketTagging":                {Route: "PUT /{Bucket}?tagging", Handle: s.putBucketTagging},
		"GetBucketTagging":                {Route: "GET /{Bucket}?tagging", Handle: s.getBucketTagging},
		"DeleteBucketTagging":             {Route: "DELETE /{Bucket}?tagging", Handle: s.deleteBucketTagging},
		"PutBucketLifecycleConfiguration": {Route: "PUT /{Bucket}?lifecycle", Handle: s.putLifecycle},
		"GetBucketLifecycleConfiguration": {Route: "GET /{Bucket}?lifecycle", Handle: s.getLifecycle},
		"DeleteBucketLifecycle":           {Route: "DELETE /{Bucket}?lifecycle", Handle: s.deleteLifecycle},
		"PutBucketPolicy":                 {Route: "PUT /{Bucket}?policy", Handle: s.putBucketPolicy},
		"GetBucketPolicy":                 {Route: "GET /{Bucket}?policy", Handle: s.getBucketPolicy},
		"DeleteBucketPolicy":              {Route: "DELETE /{Bucket}?policy", Handle: s.deleteBucketPolicy},
		"PutPublicAccessBlock":            {Route: "PUT /{Bucket}?publicAccessBlock", Handle: s.putPublicAccessBlock},
		"GetPublicAccessBlock":            {Route: "GET /{Bucket}?publicAccessBlock", Handle: s.getPublicAccessBlock},
		"DeletePublicAccessBlock":         {Route: "DELETE /{Bucket}?publicAccessBlock", Handle: s.deletePublicAccessBlock},
		"PutBucketEncryption":             {Route: "PUT /{Bucket}?encryption", Handle: s.putBucketEncryption},
		"GetBucketEncryption":             {Route: "GET /{Bucket}?encryption", Handle: s.getBucketEncryption},
		"DeleteBucketEncryption":          {Route: "DELETE /{Bucket}?encryption", Handle: s.deleteBucketEncryption},
		"DeleteObjects":                   {Route: "POST /{Bucket}?delete", Handle: s.deleteObjects},
		"PutObject":                       {Route: "PUT /{Bucket}/{Key...}", Handle: s.putObject},
		"GetObject":                       {Route: "GET /{Bucket}/{Key...}", Handle: s.getObject},
		"HeadObject":                      {Route: "HEAD /{Bucket}/{Key...}", Handle: s.headObject},
		"DeleteObject":                    {Route: "DELETE /{Bucket}/{Key...}", Handle: s.deleteObject},
		"PutObjectTagging":                {Route: "PUT /{Bucket}/{Key...}?tagging", Handle: s.putObjectTagging},
		"GetObjectTagging":                {Route: "GET /{Bucket}/{Key...}?tagging", Handle: s.getObjectTagging},
		"DeleteObjectTagging":             {Route: "DELETE /{Bucket}/{Key...}?tagging", Handle: s.deleteObjectTagging},
		"CreateMultipartUpload":           {Route: "POST /{Bucket}/{Key...}?uploads", Handle: s.createMultipartUpload},
		"UploadPart":                      {Route: "PUT /{Bucket}/{Key...}?partNumber&uploadId", Handle: s.uploadPart},
		"CompleteMultipartUpload":         {Route: "POST /{Bucket}/{Key...}?uploadId", Handle: s.completeMultipartUpload},
		"AbortMultipartUpload":            {Route: "DELETE /{Bucket}/{Key...}?uploadId", Handle: s.abortMultipartUpload},
	}
}

// pathStyle returns r addressed path-style: when its Host names a bucket
// (virtual-hosted style), a copy whose path starts with the bucket.
func pathStyle(r *http.Request) *http.Request {
	b := hostBucket(r.Host)
	if b == "" {
		return r
	}
	c := r.Clone(r.Context())
	c.Body = r.Body
	u := *r.URL
	u.Path = "/" + b + r.URL.Path
	if r.URL.RawPath != "" {
		u.RawPath = "/" + url.PathEscape(b) + r.URL.RawPath
	}
	if u.Path == "/"+b+"/" {
		u.Path, u.RawPath = "/"+b, ""
	}
	c.URL = &u
	c.Host = ""
	return c
}

// hostBucket is the bucket a virtual-hosted request's Host names, or "".
func hostBucket(host string) string {
	h := strings.ToLower(host)
	if i := strings.LastIndex(h, ":"); i >= 0 && !strings.HasSuffix(h, "]") {
		h = h[:i]
	}
	if i := strings.Index(h, ".s3."); i > 0 {
		return h[:i]
	}
	if i := strings.Index(h, ".s3-"); i > 0 {
		return h[:i]
	}
	if b, ok := strings.CutSuffix(h, ".localhost"); ok && b != "" && !strings.HasPrefix(b, "s3.") && b != "s3" {
		return b
	}
	return ""
}

// bucketName and objectKey are the bucket and key of a path-style request:
// the key is the rest of the path after the bucket, unescaped, its slashes
// (trailing and doubled ones too) kept.
func bucketName(req *awsapi.Request) string { return req.PathValue("Bucket") }

func objectKey(req *awsapi.Request) string {
	p := strings.TrimPrefix(req.HTTP.URL.EscapedPath(), "/")
	_, rest, _ := strings.Cut(p, "/")
	k, err := url.PathUnescape(rest)
	if err != nil {
		return rest
	}
	return k
}
